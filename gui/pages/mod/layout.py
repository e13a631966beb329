"""MoD tab: metric cards, fraction processed per block now and over training."""
from __future__ import annotations

import dash_bootstrap_components as dbc
from dash import dcc, html

from ...components.analysis_widgets import card, graph, note
from . import ids


def layout() -> html.Div:
    return html.Div([
        dcc.Store(id=ids.MOD_VERSION),
        html.Div(id=ids.MOD_MESSAGE),
        dbc.Row(id=ids.MOD_CARDS, class_name="g-2 mb-2"),
        dbc.Row([
            dbc.Col(card("Fraction processed per block (newest step)",
                         graph(ids.MOD_CURRENT, height=380)), xxl=5),
            dbc.Col(card("Fraction processed over training (dashed: target capacity, "
                         "dotted: inference-time router)", graph(ids.MOD_HISTORY),
                         note(ids.MOD_HISTORY_NOTE)), xxl=7),
        ], class_name="g-3 mb-3"),
    ])
