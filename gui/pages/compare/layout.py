"""Compare tab: 2-8 runs overlaid (training loss raw + EMA, validation with best points) against
steps, training bytes or wall time, one system metric of every run, a sortable table with CSV."""
from __future__ import annotations

import dash_bootstrap_components as dbc
from dash import dash_table, dcc, html

from ... import ids as common
from ...figures.base import empty_fig, graph_config
from ...figures.compare import AXES, SYSTEM_HEIGHT
from ...services.compare import MAX_RUNS
from . import ids

KEEP = {"persistence": True, "persistence_type": "local"}    # the choice survives a reload


def controls() -> html.Div:
    return html.Div([
        dcc.Dropdown(id=ids.COMPARE_RUNS, options=[], value=[], multi=True,
                     placeholder=f"pick 2 to {MAX_RUNS} runs to compare", className="mb-2", **KEEP),
        html.Div([
            html.Span("x axis", className="small text-muted me-2"),
            dbc.RadioItems(id=ids.COMPARE_AXIS, value="step", inline=True, class_name="small me-3",
                           options=[{"label": label, "value": key} for key, label in AXES.items()], **KEEP),
            html.Span("EMA smoothing", className="small text-muted me-2"),
            html.Div(dcc.Slider(id=ids.COMPARE_SMOOTHING, min=0.0, max=0.99, step=0.01, value=0.6,
                                marks={0: "0", 0.5: "0.5", 0.99: "0.99"}, updatemode="mouseup", **KEEP),
                     style={"width": "220px"}),
            dbc.Switch(id=ids.COMPARE_LOGY, label="log y", value=False, class_name="ms-3 mb-0 small", **KEEP),
            dbc.Switch(id=ids.COMPARE_FOLLOW, label="follow live", value=True, class_name="ms-3 mb-0 small"),
        ], className="d-flex align-items-center flex-wrap"),
    ])


def system_card() -> dbc.Card:
    """The System chart; the callback sets the metrics the picked runs recorded as options."""
    header = html.Div([
        html.Span("System", className="me-3"),
        dbc.RadioItems(id=ids.COMPARE_SYSTEM_METRIC, options=[], value="cpu_percent", inline=True,
                       class_name="small", **KEEP),
    ], className="d-flex align-items-center flex-wrap")
    return dbc.Card([
        dbc.CardHeader(header),
        dbc.CardBody([
            dcc.Graph(id=ids.COMPARE_SYSTEM_GRAPH, config=graph_config("compare-system"),
                      figure=empty_fig("Pick runs above to see their system metrics", height=SYSTEM_HEIGHT)),
            html.Div(id=ids.COMPARE_SYSTEM_NOTE, className="small text-muted"),
        ]),
    ], class_name="mb-3")


def table() -> dash_table.DataTable:
    return dash_table.DataTable(
        id=ids.COMPARE_TABLE, data=[], columns=[], sort_action="native", sort_mode="single",
        style_table={"overflowX": "auto"}, style_as_list_view=True,
        style_cell={"fontSize": "13px", "padding": "4px 8px", "fontFamily": "inherit", "textAlign": "left"},
        style_header={"fontWeight": "600", "backgroundColor": "#f8f9fa"})


def layout() -> html.Div:
    return html.Div([
        *(dcc.Store(id=i, storage_type="memory") for i in (
            ids.COMPARE_STATE, ids.COMPARE_ZOOM, common.x_zoom(ids.COMPARE_GRAPH),
            common.x_zoom(ids.COMPARE_SYSTEM_GRAPH), ids.COMPARE_SYSTEM_STATE)),
        dbc.Card([dbc.CardHeader("Compare runs"), dbc.CardBody(controls())], class_name="mb-3"),
        html.Div(id=ids.COMPARE_MESSAGE),
        dbc.Card(dbc.CardBody(dcc.Graph(id=ids.COMPARE_GRAPH, config=graph_config("compare"),
                                        figure={"data": [], "layout": {"height": 620}})),
                 class_name="mb-3"),
        system_card(),
        dbc.Card([
            dbc.CardHeader(html.Div([
                html.Span("Runs compared (click a header to sort)", className="me-auto"),
                dbc.Button("Export CSV", id=ids.COMPARE_CSV_BTN, size="sm", color="secondary",
                           outline=True),
                dcc.Download(id=ids.COMPARE_CSV)], className="d-flex align-items-center")),
            dbc.CardBody(table()),
        ]),
    ])
