"""Activations tab: per-block distribution (box from p1..p99) and statistics heatmap at a step
(step_controls move the slider along with new snapshots); `views` reads one snapshot."""
from __future__ import annotations

from dash import Input, Output
from dash.exceptions import PreventUpdate

from umoec.metrics import read

from ... import ids as common
from ...components.step_controls import register_step_controls
from ...context import AppContext
from ...figures.activations import activation_dist_fig, activation_heatmap_fig
from ...figures.base import empty_fig
from ...services import analysis
from ...view import analysis as av
from . import ids

TABLE = "activation_stats"


def register(app, cockpit: AppContext) -> None:
    runs_dir = cockpit.settings.runs_dir
    missing = av.missing_snapshots("activation statistics")

    register_step_controls(app, runs_dir, tab=common.TAB_ACTIVATIONS, table=TABLE, missing=missing,
                           slider=ids.ACT_STEP, message=ids.ACT_MESSAGE, version=ids.ACT_VERSION)

    @app.callback(Output(ids.ACT_DIST, "figure"), Output(ids.ACT_HEATMAP, "figure"),
                  Output(ids.ACT_STEP_LABEL, "children"),
                  Input(ids.ACT_STEP, "value"), Input(ids.ACT_VERSION, "data"))
    def views(step, version):
        got = analysis.read_at(runs_dir, version, TABLE, step, read.activation_stats_at)
        if got is None:
            raise PreventUpdate
        message, data = got
        if message:
            return empty_fig(message, height=380), empty_fig(message), ""
        shown, stats = data
        return (activation_dist_fig(stats), activation_heatmap_fig(stats),
                av.step_label(shown, version["last"]))
