"""Run selector and status badge: refreshed whenever the page pulse changes (a run appears, moves
on or changes state; gui/callbacks/tick_callbacks.py), so a run's state is never stale."""
from __future__ import annotations

from dash import Input, Output, State, no_update
from dash.exceptions import PreventUpdate

from .. import ids
from ..context import AppContext
from ..forge import resolve_forge
from ..runs import resolve, run_options, summarise


def register(app, cockpit: AppContext) -> None:
    runs_dir = cockpit.settings.runs_dir
    launcher = cockpit.launcher

    @app.callback(Output(ids.RUN_SELECT, "options"), Output(ids.RUN_SELECT, "value"),
                  Input(ids.HEADER_TICK, "data"), State(ids.RUN_SELECT, "value"),
                  State(ids.RUN_SELECT, "options"))
    def refresh_runs(_n, current, shown):
        options = run_options(runs_dir)
        if launcher is not None:  # runs just started here, before their first status.json
            known = {o["value"] for o in options}
            options += [{"label": f"{n} - starting", "value": n} for n in launcher.pending()
                        if n not in known]
        names = [o["value"] for o in options]
        value = current if current in names else (names[0] if names else None)
        # unchanged props are not sent: a value set again (even None to None) would re-trigger
        # every callback that listens to the run selector, twice a tick, and on a slow machine
        # their answers then arrive stale forever (the sidebar status never showed)
        if options == shown and value == current:
            raise PreventUpdate
        return (no_update if options == shown else options,
                no_update if value == current else value)

    @app.callback(Output(ids.RUN_STATUS, "children"), Output(ids.RUN_STATUS, "color"),
                  Input(ids.HEADER_TICK, "data"), Input(ids.RUN_SELECT, "value"))
    def refresh_status(_n, name):
        run = resolve(runs_dir, name)
        if run is None and launcher is not None and launcher.get(name) is not None:
            return "Starting", "info"
        forge_run = resolve_forge(runs_dir, name) if run is None else None
        if forge_run is not None:  # a Forge folder has no status.json to be honest about
            return forge_run.status_label(), "info"
        if run is None:
            return "no run selected", "secondary"
        s = summarise(run, launched=launcher.get(name) if launcher is not None else None)
        return s.label, s.colour
