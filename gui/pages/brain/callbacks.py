"""Brain tab: PCA scatter of hidden states per block, with a block selector and a step slider.

`controls` runs every refresh tick (a few index lookups); `view` reads one snapshot (one block:
~200 rows, all blocks: ~200 per block).
"""
from __future__ import annotations

from dash import Input, Output, State
from dash.exceptions import PreventUpdate

from umoec.metrics import read

from ... import ids
from ...components.analysis_widgets import probe_alert, slider_outputs
from ...context import AppContext
from ...figures.activations import pca_fig
from ...figures.base import empty_fig
from ...services import analysis
from ...services.runs import resolve
from ...view import analysis as av
from .layout import ALL_BLOCKS

TABLE = "hidden_states"


def block_options(blocks) -> list[dict]:
    return ([{"label": "all blocks", "value": ALL_BLOCKS}]
            + [{"label": f"block {b}", "value": b} for b in blocks])


def register(app, cockpit: AppContext) -> None:
    runs_dir = cockpit.settings.runs_dir
    missing = av.missing_snapshots("hidden-state snapshots")

    @app.callback(*slider_outputs(ids.BRAIN_STEP),
                  Output(ids.BRAIN_BLOCK, "options"),
                  Output(ids.BRAIN_BLOCK, "value"), Output(ids.BRAIN_MESSAGE, "children"),
                  Output(ids.BRAIN_VERSION, "data"),
                  Input(ids.tab_tick(ids.TAB_BRAIN), "data"), Input(ids.RUN_SELECT, "value"),
                  Input(ids.TABS, "active_tab"),
                  State(ids.BRAIN_STEP, "value"), State(ids.BRAIN_STEP, "max"),
                  State(ids.BRAIN_BLOCK, "value"), State(ids.BRAIN_VERSION, "data"))
    def controls(_n, name, tab, value, old_max, block, seen):
        if tab != ids.TAB_BRAIN:
            raise PreventUpdate
        p = analysis.probe(runs_dir, name, TABLE, missing)
        if p.version == seen:
            raise PreventUpdate
        slider = av.slider_props(p, value, old_max)
        if not p.ok:
            return (*slider, block_options([]), ALL_BLOCKS, probe_alert(p), p.version)
        try:
            with read.open_db(p.run.db_path) as conn:
                blocks = sorted(set(read.hidden_states_at(conn, p.last)["block_idx"].astype(int)))
        except read.READ_ERRORS as exc:
            p.message, p.colour = av.db_error(p.run, exc), "danger"
            return (*av.slider_props(p, None, None), block_options([]), ALL_BLOCKS, probe_alert(p),
                    p.version)
        block = block if block in blocks or block == ALL_BLOCKS else ALL_BLOCKS
        return (*slider, block_options(blocks), block, None, p.version)

    @app.callback(Output(ids.BRAIN_PCA, "figure"), Output(ids.BRAIN_STEP_LABEL, "children"),
                  Input(ids.BRAIN_STEP, "value"), Input(ids.BRAIN_BLOCK, "value"),
                  Input(ids.BRAIN_VERSION, "data"))
    def view(step, block, version):
        if not version:
            raise PreventUpdate
        if version.get("message"):
            return empty_fig(av.wrap(version["message"]), height=520), ""
        run = resolve(runs_dir, version["run"])
        if run is None:  # removed since the last tick: the next tick says so
            raise PreventUpdate
        one = None if block in (None, ALL_BLOCKS) else int(block)
        try:
            with read.open_db(run.db_path) as conn:
                shown = read.nearest_logged_step(conn, TABLE, step)
                hidden = read.hidden_states_at(conn, shown, block_idx=one)
        except read.READ_ERRORS as exc:
            return empty_fig(av.wrap(av.db_error(run, exc)), height=520), ""
        return pca_fig(hidden, one), av.step_label(shown, version["last"])
