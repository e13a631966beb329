"""Notifications: the toast area, the stores that remember what the page has seen, and
the button that asks the browser's permission for desktop notifications."""
from __future__ import annotations

import dash_bootstrap_components as dbc
from dash import dcc, html

from . import ids


def layout() -> html.Div:
    return html.Div([
        dcc.Store(id=ids.NOTIFY_SEEN, storage_type="local"),
        dcc.Store(id=ids.NOTIFY_EVENTS, storage_type="memory"),
        dcc.Store(id=ids.NOTIFY_SHOWN, storage_type="memory"),
        html.Div([], id=ids.NOTIFY_TOASTS, className="notify-toasts", role="log",
                 **{"aria-live": "polite"}),
        html.Div([
            html.Span(id=ids.NOTIFY_PERMISSION, className="text-muted small me-2"),
            dbc.Button("Enable desktop notifications", id=ids.NOTIFY_ENABLE, size="sm",
                       color="link", class_name="p-0 small"),
        ], className="d-flex justify-content-end align-items-center px-3"),
    ], id="notify-panel")
