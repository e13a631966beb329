"""Activations tab: per-block distribution (box from p1..p99) and statistics heatmap at a step.

`controls` runs every refresh tick (a few index lookups) and moves the step slider along with
new snapshots; `views` reads the one snapshot shown (one row per block).
"""
from __future__ import annotations

from dash import Input, Output, State
from dash.exceptions import PreventUpdate

from umoec.metrics import read

from ... import ids
from ...components.analysis_widgets import probe_alert, slider_outputs
from ...context import AppContext
from ...figures.activations import activation_dist_fig, activation_heatmap_fig
from ...figures.base import empty_fig
from ...services import analysis
from ...services.runs import resolve
from ...view import analysis as av

TABLE = "activation_stats"


def register(app, cockpit: AppContext) -> None:
    runs_dir = cockpit.settings.runs_dir
    missing = av.missing_snapshots("activation statistics")

    @app.callback(*slider_outputs(ids.ACT_STEP),
                  Output(ids.ACT_MESSAGE, "children"),
                  Output(ids.ACT_VERSION, "data"),
                  Input(ids.tab_tick(ids.TAB_ACTIVATIONS), "data"), Input(ids.RUN_SELECT, "value"),
                  Input(ids.TABS, "active_tab"),
                  State(ids.ACT_STEP, "value"), State(ids.ACT_STEP, "max"),
                  State(ids.ACT_VERSION, "data"))
    def controls(_n, name, tab, value, old_max, seen):
        if tab != ids.TAB_ACTIVATIONS:
            raise PreventUpdate
        p = analysis.probe(runs_dir, name, TABLE, missing)
        if p.version == seen:
            raise PreventUpdate
        return (*av.slider_props(p, value, old_max), probe_alert(p), p.version)

    @app.callback(Output(ids.ACT_DIST, "figure"), Output(ids.ACT_HEATMAP, "figure"),
                  Output(ids.ACT_STEP_LABEL, "children"),
                  Input(ids.ACT_STEP, "value"), Input(ids.ACT_VERSION, "data"))
    def views(step, version):
        if not version:
            raise PreventUpdate
        if version.get("message"):
            short = av.wrap(version["message"])
            return empty_fig(short, height=380), empty_fig(short), ""
        run = resolve(runs_dir, version["run"])
        if run is None:  # removed since the last tick: the next tick says so
            raise PreventUpdate
        try:
            with read.open_db(run.db_path) as conn:
                shown = read.nearest_logged_step(conn, TABLE, step)
                stats = read.activation_stats_at(conn, shown)
        except read.READ_ERRORS as exc:
            msg = av.wrap(av.db_error(run, exc))
            return empty_fig(msg, height=380), empty_fig(msg), ""
        return (activation_dist_fig(stats), activation_heatmap_fig(stats),
                av.step_label(shown, version["last"]))
