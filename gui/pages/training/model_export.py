"""Training tab, checkpoint list: "Export model" turns a checkpoint into the coding model
RUN/models/stepNNNNNN.umm in a background worker (`umoec.compress.worker export`, which imports
torch; the cockpit never does). The list then shows the model, as do the Compression and
Evaluation tabs' model dropdowns."""
from __future__ import annotations

from dash import ALL, Input, Output, State, ctx
from dash.exceptions import PreventUpdate

from ... import ids as common
from ...components.job_status import job_action, status_area
from ...components.visible import visible_only
from ...context import AppContext
from . import ids


def register(app, cockpit: AppContext) -> None:
    runs_dir = cockpit.settings.runs_dir
    jobs = cockpit.jobs

    @app.callback(Output(ids.CHECKPOINT_EXPORT_ACTION, "data"),
                  Input({"type": ids.CHECKPOINT_EXPORT_BTN, "index": ALL}, "n_clicks"),
                  State(common.RUN_SELECT, "value"), prevent_initial_call=True)
    def export(clicks, name):
        # a re-rendered list adds buttons with n_clicks None: only a real press counts
        if not isinstance(ctx.triggered_id, dict) or not any(clicks or []) or \
                not ctx.triggered or not ctx.triggered[0].get("value"):
            raise PreventUpdate
        checkpoint = ctx.triggered_id["index"]
        return job_action(jobs, runs_dir, name, "export", lambda run: jobs.start_export(run, checkpoint))

    @app.callback(Output(ids.CHECKPOINT_EXPORT_STATUS, "children"),
                  Input(common.tab_tick(common.TAB_TRAINING), "data"), Input(common.RUN_SELECT, "value"),
                  Input(common.TABS, "active_tab"), Input(ids.CHECKPOINT_EXPORT_ACTION, "data"),
                  State(ids.CHECKPOINT_EXPORT_STATUS, "children"))
    @visible_only(common.TAB_TRAINING)
    def status(_n, name, _tab, action, shown):
        view = status_area(jobs.latest(name, "export"), action)  # refusal, progress or outcome
        if not view and not shown:                      # nothing to show, nothing shown
            raise PreventUpdate
        return view
