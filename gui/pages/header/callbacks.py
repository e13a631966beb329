"""Run selector and status badge, refreshed whenever the page pulse changes (ticks.py). A page is
served with the run list (gui/app.py) and picks its run in the page (PICK_JS: the one the browser
remembers, else the first), so every tab reads its run at page load without a round trip."""
from __future__ import annotations

from dash import Input, Output, State
from dash.exceptions import PreventUpdate

from ... import ids as common
from ...context import AppContext
from ...services.forge import resolve_any
from ...services.runs import run_list, summarise
from . import ids

# the selected run stays while it is listed; else the first run (none when there are none)
PICK_JS = """function(options, value) {
    const names = (options || []).map(o => o.value);
    if (names.includes(value)) { return window.dash_clientside.no_update; }
    const first = names.length ? names[0] : null;
    return first === value ? window.dash_clientside.no_update : first;
}"""


def register(app, cockpit: AppContext) -> None:
    runs_dir = cockpit.settings.runs_dir
    launcher = cockpit.launcher

    app.clientside_callback(PICK_JS, Output(common.RUN_SELECT, "value"),
                            Input(common.RUN_SELECT, "options"), State(common.RUN_SELECT, "value"))

    # not at page load: the page is served with the list (gui/app.py)
    @app.callback(Output(common.RUN_SELECT, "options"), Input(common.HEADER_TICK, "data"),
                  State(common.RUN_SELECT, "options"), prevent_initial_call=True)
    def refresh_runs(_n, shown):
        options = run_list(runs_dir, launcher)
        # an unchanged list is not sent: it would re-run the pick, and a value set again (even
        # None to None) re-triggers every callback that listens to the run selector
        if options == shown:
            raise PreventUpdate
        return options

    @app.callback(Output(ids.RUN_STATUS, "children"), Output(ids.RUN_STATUS, "color"),
                  Input(common.HEADER_TICK, "data"), Input(common.RUN_SELECT, "value"))
    def refresh_status(_n, name):
        run, forge_run = resolve_any(runs_dir, name)
        if run is None and launcher is not None and launcher.get(name) is not None:
            return "Starting", "info"
        if forge_run is not None:  # a Forge folder has no status.json to be honest about
            return forge_run.status_label(), "info"
        if run is None:
            return "no run selected", "secondary"
        s = summarise(run, launched=launcher.get(name) if launcher is not None else None)
        return s.label, s.colour
