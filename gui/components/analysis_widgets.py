"""Small layout pieces shared by the analysis tabs, and the Outputs that fill them (pure: no
callbacks, no I/O)."""
from __future__ import annotations

import dash_bootstrap_components as dbc
from dash import Output, dcc, html

from ..figures.base import empty_fig, graph_config
from ..view.analysis import SLIDER_PROPS, Probe


def graph(id_: str, message: str = "Loading...", height: int = 320) -> dcc.Graph:
    """A graph that starts with a message instead of empty axes; its PNG is named after it."""
    config = {**graph_config(id_), "modeBarButtonsToRemove": ["lasso2d", "select2d"]}
    return dcc.Graph(id=id_, figure=empty_fig(message, height=height), config=config)


def card(title, *body, class_name: str = "h-100") -> dbc.Card:
    return dbc.Card([dbc.CardHeader(title), dbc.CardBody(list(body))], class_name=class_name)


def step_slider(slider_id: str, label_id: str, what: str) -> html.Div:
    """A step slider over a table's logged steps, with a label naming the step shown."""
    return html.Div([
        html.Div([html.Span(what, className="text-muted small text-uppercase me-2"),
                  html.Span(id=label_id, className="fw-semibold")], className="mb-1"),
        dcc.Slider(id=slider_id, min=0, max=0, step=1, value=None, marks={}, updatemode="mouseup",
                   tooltip={"placement": "bottom"}),
    ], className="mb-2")


def note(id_: str) -> html.Div:
    return html.Div(id=id_, className="text-muted small mt-1")


def metric_card(title: str, value: str, sub: str = "", colour: str = "", size: int = 4,
                widths: dict | None = None) -> dbc.Col:
    """A metric card: title, value (Bootstrap font size `size`), note; `widths`: the column's
    breakpoint widths (default four to a row on large screens)."""
    return dbc.Col(dbc.Card(dbc.CardBody([
        html.Div(title, className="text-muted small text-uppercase"),
        html.Div(value, className=f"fs-{size} fw-semibold {colour}".strip()),
        html.Div(sub, className="text-muted small"),
    ]), class_name="h-100"), **(widths or {"xs": 6, "lg": 3}), class_name="mb-2")


def slider_outputs(slider_id: str) -> list:
    """The Outputs that view.analysis.slider_props fills, in its order."""
    return [Output(slider_id, prop) for prop in SLIDER_PROPS]


def probe_alert(p: Probe):
    """What a probe found instead of data, as an alert (None when it found data)."""
    return dbc.Alert(p.message, color=p.colour, class_name="mb-3") if p.message else None
