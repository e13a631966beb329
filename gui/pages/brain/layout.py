"""Brain tab: hidden states of a block projected on two principal components."""
from __future__ import annotations

import dash_bootstrap_components as dbc
from dash import dcc, html

from ...components.analysis_widgets import card, graph, step_slider
from . import ids

ALL_BLOCKS = "all"


def layout() -> html.Div:
    return html.Div([
        dcc.Store(id=ids.BRAIN_VERSION),
        html.Div(id=ids.BRAIN_MESSAGE),
        dbc.Card(dbc.CardBody(dbc.Row([
            dbc.Col([html.Div("block", className="text-muted small text-uppercase mb-1"),
                     dcc.Dropdown(id=ids.BRAIN_BLOCK, options=[], clearable=False,
                                  value=ALL_BLOCKS)], md=3),
            dbc.Col(step_slider(ids.BRAIN_STEP, ids.BRAIN_STEP_LABEL, "snapshot at"), md=9),
        ], class_name="g-3")), class_name="mb-3"),
        card("Hidden states, first two principal components (PCA per block and snapshot)",
             graph(ids.BRAIN_PCA, height=520), class_name="mb-3"),
    ])
