"""An honest empty state for a tab whose feature is not built yet (no blank page, no traceback)."""
from __future__ import annotations

import dash_bootstrap_components as dbc
from dash import html


def layout(title: str, what: str, status: str, today: str = "") -> dbc.Card:
    """A card that says what the tab will show, why it does not yet, and what works today."""
    body = [html.H5(title, className="card-title"), html.P(what),
            dbc.Alert(status, color="secondary", class_name="mb-2 small")]
    if today:
        body.append(html.P(today, className="text-muted small mb-0"))
    return dbc.Card(dbc.CardBody(body), class_name="mt-2")
