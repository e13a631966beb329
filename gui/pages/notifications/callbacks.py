"""Notifications: a toast (and a desktop notification, once the user has allowed them) when a run
completes, crashes or stalls.

When the page pulse changes, the run watchdog's states (gui/services/watchdog.py) are compared
with the last ones this browser saw (ids.NOTIFY_SEEN, localStorage; gui/services/notify.py says
what is news), so a reload never repeats a toast. Desktop notifications use the browser's
Notification API, whose permission is asked only on a click of "Enable desktop notifications".
"""
from __future__ import annotations

import hashlib
from typing import Any

import dash_bootstrap_components as dbc
from dash import Input, Output, State, html, no_update

from ... import ids as common
from ...context import AppContext
from ...services import notify
from . import ids

MAX_TOASTS = 6
STICKY = {"danger", "warning"}       # crashes and stalls stay until dismissed
TOAST_MS = 20_000

# The browser side: ask permission on a click (never on load), show one notification per event.
PERMISSION_JS = """async function(n_clicks) {
    if (!("Notification" in window)) { return "this browser has no desktop notifications"; }
    if (n_clicks && Notification.permission === "default") {
        try { await Notification.requestPermission(); } catch (e) { /* old callback form */ }
    }
    const p = Notification.permission;
    return p === "granted" ? "desktop notifications on" :
           p === "denied" ? "desktop notifications blocked in this browser's site settings" : "";
}"""
NOTIFY_JS = """function(events) {
    if (!events || !events.items || !("Notification" in window)
        || Notification.permission !== "granted") { return window.dash_clientside.no_update; }
    let shown = 0;
    for (const e of events.items) {
        if (!e.notify) { continue; }
        try { new Notification(e.title, {body: e.body, tag: e.key}); shown += 1; } catch (err) {}
    }
    return shown;
}"""


def toast(event: dict) -> dbc.Toast:
    key = hashlib.sha1(event["key"].encode()).hexdigest()[:12]
    return dbc.Toast(html.Div(event["body"], className="small"), header=event["title"],
                     icon=event["colour"], dismissable=True, is_open=True,
                     duration=None if event["colour"] in STICKY else TOAST_MS,
                     id=f"notify-toast-{key}", class_name="mb-2",
                     header_class_name="fw-semibold")


def _is_open(child: Any) -> bool:
    props = child.get("props", {}) if isinstance(child, dict) else {}
    return props.get("is_open", True) is not False


def tick(current: dict[str, dict], seen: dict | None, toasts: list | None) -> dict[str, Any]:
    """One refresh from the watchdog's snapshot: new events, the stored states, the toast list."""
    events = notify.transitions(seen, current)
    new_seen = notify.stored(current)
    old_states = {n: r.get("state") for n, r in (seen or {}).get("runs", {}).items()} \
        if isinstance(seen, dict) and isinstance(seen.get("runs"), dict) else None
    changed = old_states != {n: r["state"] for n, r in new_seen["runs"].items()}
    out = {"seen": new_seen if changed else no_update, "events": no_update, "toasts": no_update}
    if events:
        kept = [t for t in (toasts or []) if _is_open(t)]
        out["events"] = {"items": events[:notify.MAX_EVENTS]}
        fresh = [toast(e) for e in events[:notify.MAX_EVENTS]]
        if len(events) > notify.MAX_EVENTS:
            fresh.append(toast({"key": f"more:{new_seen['at']}", "colour": "info",
                                "title": f"{len(events) - notify.MAX_EVENTS} more run changes",
                                "body": "see the Run selector for every run's state"}))
        out["toasts"] = (fresh + kept)[:MAX_TOASTS]
    return out


def register(app, cockpit: AppContext) -> None:
    watchdog = cockpit.watchdog

    @app.callback(Output(ids.NOTIFY_SEEN, "data"), Output(ids.NOTIFY_EVENTS, "data"),
                  Output(ids.NOTIFY_TOASTS, "children"),
                  Input(common.HEADER_TICK, "data"), State(ids.NOTIFY_SEEN, "data"),
                  State(ids.NOTIFY_TOASTS, "children"))
    def watch(_n, seen, toasts):
        out = tick(watchdog.current()[1], seen, toasts)
        return out["seen"], out["events"], out["toasts"]

    app.clientside_callback(NOTIFY_JS, Output(ids.NOTIFY_SHOWN, "data"),
                            Input(ids.NOTIFY_EVENTS, "data"), prevent_initial_call=True)
    app.clientside_callback(PERMISSION_JS, Output(ids.NOTIFY_PERMISSION, "children"),
                            Input(ids.NOTIFY_ENABLE, "n_clicks"))
