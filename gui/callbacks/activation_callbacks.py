"""Activations tab: per-block distribution (box from p1..p99) and statistics heatmap at a step.

`controls` runs every refresh tick (a few index lookups) and moves the step slider along with
new snapshots; `views` reads the one snapshot shown (one row per block).
"""
from __future__ import annotations

import sqlite3

from dash import Input, Output, State
from dash.exceptions import PreventUpdate

from .. import db, ids
from ..context import AppContext
from ..figures.activations import activation_dist_fig, activation_heatmap_fig
from ..figures.base import empty_fig
from ..runs import resolve
from . import analysis_common as common

TABLE = "activation_stats"
READ_ERRORS = (FileNotFoundError, sqlite3.Error, OSError, ValueError)


def missing_snapshots(what: str, every_key: str = "eval_every"):
    """An explainer for a table written at evaluations (before the first one it is empty)."""
    def explain(run, cfg: dict, has_metrics: bool) -> str:
        every = common.config_value(cfg, "logging", every_key)
        when = f"every logging.{every_key} ({every}) steps" if every else f"every logging.{every_key} steps"
        state = "yet (before the first evaluation)" if has_metrics or every else "yet"
        return f"No {what} {state}: the trainer writes a snapshot {when}."
    return explain


def register(app, cockpit: AppContext) -> None:
    runs_dir = cockpit.settings.runs_dir
    missing = missing_snapshots("activation statistics")

    @app.callback(*common.slider_outputs(ids.ACT_STEP),
                  Output(ids.ACT_MESSAGE, "children"),
                  Output(ids.ACT_VERSION, "data"),
                  Input(ids.tab_tick(ids.TAB_ACTIVATIONS), "data"), Input(ids.RUN_SELECT, "value"),
                  Input(ids.TABS, "active_tab"),
                  State(ids.ACT_STEP, "value"), State(ids.ACT_STEP, "max"),
                  State(ids.ACT_VERSION, "data"))
    def controls(_n, name, tab, value, old_max, seen):
        if tab != ids.TAB_ACTIVATIONS:
            raise PreventUpdate
        p = common.probe(runs_dir, name, TABLE, missing)
        if p.version == seen:
            raise PreventUpdate
        return (*common.slider_props(p, value, old_max), p.alert(), p.version)

    @app.callback(Output(ids.ACT_DIST, "figure"), Output(ids.ACT_HEATMAP, "figure"),
                  Output(ids.ACT_STEP_LABEL, "children"),
                  Input(ids.ACT_STEP, "value"), Input(ids.ACT_VERSION, "data"))
    def views(step, version):
        if not version:
            raise PreventUpdate
        if version.get("message"):
            short = common.wrap(version["message"])
            return empty_fig(short, height=380), empty_fig(short), ""
        run = resolve(runs_dir, version["run"])
        if run is None:  # removed since the last tick: the next tick says so
            raise PreventUpdate
        try:
            with db.open_db(run.db_path) as conn:
                shown = db.nearest_logged_step(conn, TABLE, step)
                stats = db.activation_stats_at(conn, shown)
        except READ_ERRORS as exc:
            msg = common.wrap(common.db_error(run, exc))
            return empty_fig(msg, height=380), empty_fig(msg), ""
        return (activation_dist_fig(stats), activation_heatmap_fig(stats),
                common.step_label(shown, version["last"]))
