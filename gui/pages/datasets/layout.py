"""Datasets tab: the datasets folder's contents, a preview, and a new-dataset form
with a live console of bin.prepare_data."""
from __future__ import annotations

import dash_bootstrap_components as dbc
from dash import dcc, html

from . import ids

CONSOLE_STYLE = {"minHeight": "4rem"}


def _list_card() -> dbc.Card:
    return dbc.Card([
        dbc.CardHeader("Datasets"),
        dbc.CardBody([
            html.Div(id=ids.DATASETS_NOTE, className="text-muted small mb-2"),
            html.Div(id=ids.DATASETS_TABLE),
            html.Div(id=ids.DATASETS_RUNS, className="small mt-2"),
        ]),
    ], class_name="mb-3")


def _preview_card() -> dbc.Card:
    return dbc.Card([
        dbc.CardHeader("Preview"),
        dbc.CardBody([
            html.Div([
                dbc.Select(id=ids.DATASETS_SELECT, options=[], placeholder="choose a dataset",
                           size="sm", class_name="me-2", style={"maxWidth": "22rem"}),
                dbc.Button("Use in config editor", id=ids.DATASETS_USE, size="sm",
                           color="primary", disabled=True),
            ], className="d-flex align-items-center mb-2"),
            html.Div(id=ids.DATASETS_USE_MSG, className="small mb-2"),
            html.Div(id=ids.DATASETS_PREVIEW),
            html.Div(id=ids.DATASETS_FILES, className="mt-2"),
        ]),
    ], class_name="mb-3")


def _new_card() -> dbc.Card:
    return dbc.Card([
        dbc.CardHeader("New dataset (python -m bin.prepare_data)"),
        dbc.CardBody([
            dbc.Row([
                dbc.Col([dbc.Label("Name", html_for=ids.DATASETS_NEW_NAME, class_name="small mb-0"),
                         dbc.Input(id=ids.DATASETS_NEW_NAME, size="sm", placeholder="my-corpus")],
                        md=4),
                dbc.Col([dbc.Label("Validation fraction", html_for=ids.DATASETS_NEW_VAL,
                                   class_name="small mb-0"),
                         dbc.Input(id=ids.DATASETS_NEW_VAL, type="number", value=0.05, min=0.001,
                                   max=0.499, step="any", size="sm")], md=4),
                dbc.Col([dbc.Label("Max bytes", html_for=ids.DATASETS_NEW_MAX,
                                   class_name="small mb-0"),
                         dbc.Input(id=ids.DATASETS_NEW_MAX, type="number", value=16_000_000,
                                   min=1024, step=1, size="sm")], md=4),
            ], class_name="g-2 mb-2"),
            dbc.Label("Sources: files or folders on the cockpit's machine, one per line (relative "
                      "paths: the folder the cockpit was started from; none: the Python standard "
                      "library corpus); end a line with @W to weigh that source W times in "
                      "training", html_for=ids.DATASETS_NEW_SOURCES,
                      class_name="small mb-0"),
            dbc.Textarea(id=ids.DATASETS_NEW_SOURCES, rows=3, size="sm",
                         placeholder="/path/to/folder @2\n/path/to/file.txt", class_name="mb-2"),
            html.Div([
                dbc.Button("Create dataset", id=ids.DATASETS_CREATE, color="success", size="sm",
                           class_name="me-2"),
                dbc.Button("Cancel build", id=ids.DATASETS_CANCEL, color="danger", size="sm",
                           outline=True, disabled=True),
            ], className="mb-2"),
            html.Div(id=ids.DATASETS_BUILD_MSG, className="small mb-2", role="status"),
            html.Pre(id=ids.DATASETS_CONSOLE, className="dataset-console p-2 mb-0",
                     style=CONSOLE_STYLE),
        ]),
    ], class_name="mb-3")


def layout() -> html.Div:
    return html.Div([
        dcc.Store(id=ids.DATASETS_JOB, storage_type="memory"),
        dcc.Store(id=ids.DATASETS_VERSION, storage_type="memory"),
        dcc.Interval(id=ids.DATASETS_POLL, interval=500, disabled=True),
        _list_card(),
        dbc.Row([dbc.Col(_preview_card(), xl=6), dbc.Col(_new_card(), xl=6)], class_name="g-3"),
    ], id="datasets-panel")
