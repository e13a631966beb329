"""Training tab (spec WS2): KPIs, ETA, loss and lr charts, head losses, checkpoints, log tail."""
from __future__ import annotations

import dash_bootstrap_components as dbc
from dash import dcc, html

from .. import ids

LOG_STYLE = {"maxHeight": "300px", "overflowY": "auto", "fontSize": "11px"}


def kpi_card(title: str, value: str, sub: str = "") -> dbc.Col:
    return dbc.Col(dbc.Card(dbc.CardBody([
        html.Div(title, className="text-muted small text-uppercase"),
        html.Div(value, className="fs-4 fw-semibold"),
        html.Div(sub, className="text-muted small"),
    ]), class_name="h-100"), xs=6, md=4, xl=2, class_name="mb-2")


def layout() -> html.Div:
    return html.Div([
        html.Div(id=ids.TRAINING_ERROR),
        dbc.Row(id=ids.TRAINING_KPIS, class_name="g-2"),
        html.Div(id=ids.TRAINING_ETA, className="text-muted mb-2"),
        dbc.Row([
            dbc.Col(dbc.Card([dbc.CardHeader("Bits per byte"),
                              dbc.CardBody(dcc.Graph(id=ids.TRAINING_LOSS))]), lg=8),
            dbc.Col(dbc.Card([dbc.CardHeader("Loss per head (latest step)"),
                              dbc.CardBody(html.Div(id=ids.TRAINING_HEADS))]), lg=4),
        ], class_name="g-3 mb-3"),
        dbc.Row([
            dbc.Col(dbc.Card([dbc.CardHeader("Learning rate and gradient norm"),
                              dbc.CardBody(dcc.Graph(id=ids.TRAINING_LR))]), lg=8),
            dbc.Col(dbc.Card([dbc.CardHeader("Checkpoints"),
                              dbc.CardBody(html.Div(id=ids.CHECKPOINT_LIST))]), lg=4),
        ], class_name="g-3 mb-3"),
        dbc.Card([dbc.CardHeader("training.log (last 100 lines)"),
                  dbc.CardBody(html.Pre(id=ids.LOG_TAIL, style=LOG_STYLE, className="mb-0"))]),
    ])
