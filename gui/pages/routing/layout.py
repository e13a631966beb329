"""Routing tab: expert load heatmap with a step slider, load history per block,
load balance (Gini, max/min) and a drill-down on one expert."""
from __future__ import annotations

import dash_bootstrap_components as dbc
from dash import dcc, html

from ...components.analysis_widgets import card, graph, note, step_slider
from . import ids


def layout() -> html.Div:
    history_controls = dbc.Row([
        dbc.Col(dcc.Dropdown(id=ids.ROUTING_BLOCK, options=[], clearable=False,
                             placeholder="MoE block"), md=5, xl=3),
        dbc.Col(dbc.RadioItems(id=ids.ROUTING_VALUE, inline=True, value="load",
                               options=[{"label": "load", "value": "load"},
                                        {"label": "balancing bias", "value": "bias"}]),
                md=7, xl=9, class_name="d-flex align-items-center"),
    ], class_name="g-2 mb-2")
    return html.Div([
        dcc.Store(id=ids.ROUTING_VERSION),
        dcc.Store(id=ids.ROUTING_SELECTED),
        html.Div(id=ids.ROUTING_MESSAGE),
        dbc.Row([
            dbc.Col(card("Expert load per block (white = balanced, red = overloaded)",
                         step_slider(ids.ROUTING_STEP, ids.ROUTING_STEP_LABEL, "heatmap at"),
                         graph(ids.ROUTING_HEATMAP),
                         html.Div("Click a cell to follow that expert over time.",
                                  className="text-muted small")), xxl=7),
            dbc.Col(card("Selected expert: load and bias over time",
                         graph(ids.ROUTING_EXPERT_DETAIL, "Click a heatmap cell", height=340)),
                    xxl=5),
        ], class_name="g-3 mb-3"),
        card("Expert load over time", history_controls, graph(ids.ROUTING_HISTORY),
             note(ids.ROUTING_HISTORY_NOTE), class_name="mb-3"),
        card("Load balance per block", graph(ids.ROUTING_BALANCE, height=360), class_name="mb-3"),
    ])
