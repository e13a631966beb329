"""Activations tab: per-block activation distribution and statistics at a step."""
from __future__ import annotations

import dash_bootstrap_components as dbc
from dash import dcc, html

from ...components.analysis_widgets import card, graph, step_slider
from . import ids


def layout() -> html.Div:
    return html.Div([
        dcc.Store(id=ids.ACT_VERSION),
        html.Div(id=ids.ACT_MESSAGE),
        dbc.Card(dbc.CardBody(step_slider(ids.ACT_STEP, ids.ACT_STEP_LABEL, "snapshot at")),
                 class_name="mb-3"),
        dbc.Row([
            dbc.Col(card("Activation distribution per block", graph(ids.ACT_DIST, height=380)),
                    xxl=7),
            dbc.Col(card("Statistics per block", graph(ids.ACT_HEATMAP, height=380)), xxl=5),
        ], class_name="g-3 mb-3"),
    ])
