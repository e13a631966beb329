"""Routing tab: heatmap at a step, expert load history, load balance, drill-down on a click.
Per tick only the step controls run; the figures are redrawn when the data version or a control
changes (the history from an incremental, thinned cache; the drill-down reads one expert)."""
from __future__ import annotations

from dash import Input, Output, State, ctx, no_update
from dash.exceptions import PreventUpdate

from umoec.metrics import read

from ... import ids as common
from ...components.step_controls import BlockPicker, register_step_controls
from ...context import AppContext
from ...figures import routing as figs
from ...figures.base import empty_fig
from ...services import analysis
from ...view import analysis as av
from . import ids

TABLE = "moe_routing"
HISTORY = analysis.HistoryCache(TABLE)


def missing_routing(run, cfg: dict, has_metrics: bool) -> str:
    """Why a run has no routing rows: no MoE blocks, or none logged yet."""
    pattern = av.block_pattern(cfg)
    if pattern is not None and not any(c in "Ss" for c in pattern):
        return (f"Run {run.name} has no MoE blocks (block pattern {pattern!r} has no S/s block), "
                "so there is no expert routing to show.")
    every = av.config_value(cfg, "logging", "log_every", "logging.log_every")
    if not has_metrics:
        return f"No expert routing logged yet: it is written with the training metrics, every {every} steps."
    return (f"Run {run.name} has training metrics but no expert routing rows: its trainer does not "
            f"log routing (it should, every {every} steps).")


# the block chosen while the newest step still has it, else the first
PICKER = BlockPicker(ids.ROUTING_BLOCK, lambda conn, step: read.moe_routing_at(conn, step)["block_idx"],
                     lambda blocks: [{"label": f"block {b}", "value": b} for b in blocks],
                     lambda block, blocks: block if block in blocks else (blocks[0] if blocks else None))


def _read(got: tuple | None) -> tuple:
    """What analysis.read_shown found, or no update when there is nothing to redraw."""
    if got is None:
        raise PreventUpdate
    return got


def _selected(selected, run_name):
    if not selected or selected.get("run") != run_name:
        return None
    return int(selected["block"]), int(selected["expert"])


def register(app, cockpit: AppContext) -> None:
    runs_dir = cockpit.settings.runs_dir

    register_step_controls(app, runs_dir, tab=common.TAB_ROUTING, table=TABLE, missing=missing_routing,
                           slider=ids.ROUTING_STEP, message=ids.ROUTING_MESSAGE,
                           version=ids.ROUTING_VERSION, picker=PICKER)

    @app.callback(Output(ids.ROUTING_HEATMAP, "figure"), Output(ids.ROUTING_STEP_LABEL, "children"),
                  Input(ids.ROUTING_STEP, "value"), Input(ids.ROUTING_VERSION, "data"),
                  Input(ids.ROUTING_SELECTED, "data"))
    def heatmap(step, version, selected):
        message, got = _read(analysis.read_at(runs_dir, version, TABLE, step, read.moe_routing_at))
        if message:
            return empty_fig(message), ""
        shown, at = got
        fig = figs.routing_heatmap_fig(at, highlight=_selected(selected, version["run"]))
        return fig, av.step_label(shown, version["last"])

    @app.callback(Output(ids.ROUTING_HISTORY, "figure"), Output(ids.ROUTING_BALANCE, "figure"),
                  Output(ids.ROUTING_HISTORY_NOTE, "children"),
                  Input(ids.ROUTING_VERSION, "data"), Input(ids.ROUTING_BLOCK, "value"),
                  Input(ids.ROUTING_VALUE, "value"), Input(ids.ROUTING_SELECTED, "data"))
    def history(version, block, value, selected):
        message, got = _read(analysis.read_shown(runs_dir, version,
                                                 lambda conn, run: HISTORY.get(conn, run.db_path)))
        if message:
            return empty_fig(message), empty_fig(message, height=440), ""
        rows, stride, n_steps = got
        sel = _selected(selected, version["run"])
        highlight = sel[1] if sel is not None and sel[0] == block else None
        fig = figs.moe_routing_history_fig(rows, block, value or "load", highlight=highlight)
        new_data = not ctx.triggered_prop_ids or f"{ids.ROUTING_VERSION}.data" in ctx.triggered_prop_ids
        balance = figs.load_balance_fig(rows) if new_data else no_update
        hint = "Click a heatmap cell for one expert at full resolution."
        return fig, balance, av.history_note(stride, n_steps, hint)

    @app.callback(Output(ids.ROUTING_SELECTED, "data"),
                  Output(ids.ROUTING_BLOCK, "value", allow_duplicate=True),
                  Input(ids.ROUTING_HEATMAP, "clickData"), State(ids.ROUTING_VERSION, "data"),
                  prevent_initial_call=True)
    def select(click, version):
        try:  # dcc.Graph drops array-valued point fields (customdata) of heatmaps: use x, y
            point = click["points"][0]
            block, expert = int(point["y"]), int(point["x"])
        except (TypeError, KeyError, IndexError, ValueError):
            raise PreventUpdate from None
        return {"run": (version or {}).get("run"), "block": block, "expert": expert}, block

    @app.callback(Output(ids.ROUTING_EXPERT_DETAIL, "figure"),
                  Input(ids.ROUTING_SELECTED, "data"), Input(ids.ROUTING_VERSION, "data"))
    def detail(selected, version):
        if not version:
            raise PreventUpdate
        sel = _selected(selected, version.get("run"))
        if version.get("message") or sel is None:
            return empty_fig(av.wrap("Click a heatmap cell to follow that expert's "
                                     "load and bias over time", 45), height=340)

        def load(conn, _run):
            n_experts = int((read.moe_routing_at(conn, version["last"])["block_idx"] == sel[0]).sum())
            return read.moe_expert_history(conn, *sel), n_experts
        message, got = _read(analysis.read_shown(runs_dir, version, load))
        if message:
            return empty_fig(message, height=340)
        expert, n_experts = got
        return figs.expert_detail_fig(expert, sel[0], sel[1], n_experts or None)
