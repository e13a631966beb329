"""The refresh tick: one pulse request per tick, and only a changed pulse refreshes anything.

`pulse` (server, every ids.REFRESH tick) is a short signature of what the pages show
(gui/services/pulse.py); unchanged, the answer is "no update" and nothing else runs. When it
changes, the clientside router advances common.HEADER_TICK (run list, status, run controls,
notifications) and the visible tab's `common.tab_tick(tab)`; hidden tabs refresh when shown.
At page load neither runs: the page is served with its pulse (`served_pulse`) and run list.
"""
from __future__ import annotations

import json
import logging
from pathlib import Path

from dash import Input, Output, State
from dash.exceptions import PreventUpdate

from ... import ids as common
from ...context import AppContext
from ...services import pulse as P
from ...services.forge import resolve_any
from . import ids

log = logging.getLogger(__name__)
ROUTER_JS = """function(pulse, active) {
    const tabs = %s;
    const none = window.dash_clientside.no_update;
    const ctx = window.dash_clientside.callback_context;
    const byPulse = (ctx.triggered || []).some(t => t.prop_id.startsWith("%s."));
    const n = (pulse && pulse.n) || 0;
    if (byPulse && (!n || pulse.quiet)) { return [none].concat(tabs.map(t => none)); }  // a baseline
    return [n].concat(tabs.map(t => (t === active ? n : none)));
}"""


def run_folder(runs_dir: Path, name) -> Path | None:
    """The folder the selected run's pages read: a run of the runs folder or a Forge folder."""
    run, forge_run = resolve_any(runs_dir, name)
    if run is not None:
        return run.root
    return forge_run.path if forge_run is not None else None


def next_pulse(sig: str, name, last: dict | None) -> dict:
    """The pulse after `last` for signature `sig` ("REST:OWN": everything but the selected run's
    folder, then that folder) and the selected run `name`. "quiet": only the selection moved the
    signature, so the router refreshes nothing (what shows the run listens to the selector)."""
    if last is not None and last.get("sig") == sig:
        raise PreventUpdate
    n = int(last.get("n") or 0) + 1 if last is not None else 0
    quiet = (last is not None and last.get("run") != name
             and str(last.get("sig", "")).split(":")[0] == sig.split(":")[0])
    return {"sig": sig, "n": n, "run": name, "quiet": quiet}


def current_signature(cockpit: AppContext, name) -> str:
    """The pulse's signature now, for selected run `name` ("REST:OWN", see next_pulse)."""
    runs_dir, data_dir = cockpit.settings.runs_dir, cockpit.settings.data_dir
    launcher = cockpit.launcher
    try:
        busy = P.any_busy(cockpit.jobs, cockpit.datasets)
        rest = P.signature(cockpit.watchdog.version, None, data_dir,
                           launcher.pending() if launcher is not None else (), busy)
        own = P.signature(0, run_folder(runs_dir, name), None, busy=busy)
    except Exception:  # never freeze the page: refresh every tick, as without a pulse
        log.exception("page pulse failed; refreshing at every tick")
        rest = own = P.signature(0, None, None, busy=True)
    return f"{rest}:{own}"


def served_pulse(cockpit: AppContext, name) -> dict:
    """The pulse a page is served with, for the run it will most likely show (`name`), so the
    first tick refreshes only what changed since the page was built."""
    return {"sig": current_signature(cockpit, name), "n": 0, "run": name}


def register(app, cockpit: AppContext) -> None:
    # neither runs at page load: the page is served with its pulse (served_pulse), and the tabs'
    # callbacks read their run at load by themselves
    @app.callback(Output(common.PULSE, "data"), Input(ids.REFRESH, "n_intervals"),
                  State(common.RUN_SELECT, "value"), State(common.PULSE, "data"),
                  prevent_initial_call=True)
    def pulse(_n, name, last):
        return next_pulse(current_signature(cockpit, name), name,
                          last if isinstance(last, dict) else None)

    app.clientside_callback(
        ROUTER_JS % (json.dumps(list(common.TAB_IDS)), common.PULSE),
        Output(common.HEADER_TICK, "data"),
        *[Output(common.tab_tick(t), "data") for t in common.TAB_IDS],
        Input(common.PULSE, "data"), Input(common.TABS, "active_tab"), prevent_initial_call=True)
