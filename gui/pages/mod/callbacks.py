"""MoD tab: metric cards, fraction processed per block (newest step) and over training; one
callback that probes the run per tick and redraws only when new rows arrived."""
from __future__ import annotations

from dash import Input, Output, State
from dash.exceptions import PreventUpdate

from umoec.metrics import read

from ... import ids as common
from ...components.analysis_widgets import metric_card, probe_alert
from ...components.visible import visible_only
from ...context import AppContext
from ...figures.base import empty_fig
from ...figures.mod import mod_current_fig, mod_gate_history_fig, mod_summary
from ...services import analysis
from ...view import analysis as av
from ...view.read_errors import db_read_error
from . import ids

TABLE = "mod_gates"
HISTORY = analysis.HistoryCache(TABLE)


def missing_mod(run, cfg: dict, has_metrics: bool) -> str:
    """Why a run has no MoD rows: MoD off, no lower-case block, or nothing logged yet."""
    if av.config_value(cfg, "mod", "enabled") is False:
        return f"Run {run.name} has Mixture-of-Depths switched off (mod.enabled: false)."
    pattern = av.block_pattern(cfg)
    if pattern is not None and not any(c.islower() for c in pattern):
        return (f"Run {run.name} has no MoD blocks (block pattern {pattern!r} has no lower-case "
                "block), so there are no gates to show.")
    every = av.config_value(cfg, "logging", "log_every", "logging.log_every")
    if not has_metrics:
        return (f"No MoD gate fractions logged yet: they are written with the training metrics, "
                f"every {every} steps.")
    return (f"Run {run.name} has training metrics but no MoD gate rows: its trainer does not log "
            f"them (it should, every {every} steps).")


def cards(s: dict) -> list:
    """The metric cards: average fraction, deviation from capacity, inference-time fraction."""
    if not s:
        return []
    run_avg = f"; whole run {s['run_average']:.1%}" if "run_average" in s else ""
    out = [metric_card("avg fraction processed", f"{s['average']:.1%}",
                       f"newest step, {s['blocks']} MoD block{'s' * (s['blocks'] != 1)}{run_avg}"),
           metric_card("deviation from capacity", f"{s['deviation'] * 100:+.2f} pts",
                       f"capacity {s['capacity']:.0%}; worst block {s['worst'] * 100:.2f} pts",
                       "" if abs(s["deviation"]) <= 0.05 else "text-warning")]
    if s["inference"] is not None:
        out.append(metric_card("inference-time fraction", f"{s['inference']:.1%}",
                               f"{(s['inference'] - s['capacity']) * 100:+.1f} pts vs capacity "
                               "(causal threshold router)"))
    return out + [metric_card("step", f"{s['step']:,}", "newest MoD row")]


def register(app, cockpit: AppContext) -> None:
    runs_dir = cockpit.settings.runs_dir

    @app.callback(Output(ids.MOD_MESSAGE, "children"), Output(ids.MOD_CARDS, "children"),
                  Output(ids.MOD_CURRENT, "figure"), Output(ids.MOD_HISTORY, "figure"),
                  Output(ids.MOD_HISTORY_NOTE, "children"), Output(ids.MOD_VERSION, "data"),
                  Input(common.tab_tick(common.TAB_MOD), "data"), Input(common.RUN_SELECT, "value"),
                  Input(common.TABS, "active_tab"), State(ids.MOD_VERSION, "data"))
    @visible_only(common.TAB_MOD)
    def refresh(_n, name, _tab, seen):
        p = analysis.probe(runs_dir, name, TABLE, missing_mod)
        if p.version == seen:
            raise PreventUpdate
        if p.ok:
            try:
                with read.open_db(p.run.db_path) as conn:
                    at = read.mod_gates_at(conn, p.last)
                    rows, stride, n_steps = HISTORY.get(conn, p.run.db_path)
            except read.READ_ERRORS as exc:
                p.message, p.colour = db_read_error(p.run.db_path, exc), "danger"
        if not p.ok:
            short = av.wrap(p.message)
            return (probe_alert(p), [], empty_fig(short, height=300), empty_fig(short),
                    "", p.version)
        summary = mod_summary(at, rows)
        return (None, cards(summary), mod_current_fig(at),
                mod_gate_history_fig(rows), av.history_note(stride, n_steps), p.version)
