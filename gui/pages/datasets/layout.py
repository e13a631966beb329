"""Datasets tab: the datasets folder's contents, a preview, and a new-dataset form
with a live console of bin.prepare_data."""
from __future__ import annotations

import dash_bootstrap_components as dbc
from dash import dcc, html

from ...components.analysis_widgets import card
from ...components.coding_controls import field, job_buttons
from . import ids


def _list_card() -> dbc.Card:
    return card("Datasets",
                html.Div(id=ids.DATASETS_NOTE, className="text-muted small mb-2"),
                html.Div(id=ids.DATASETS_TABLE),
                html.Div(id=ids.DATASETS_RUNS, className="small mt-2"), class_name="mb-3")


def _preview_card() -> dbc.Card:
    return card(
        "Preview",
        html.Div([
            dbc.Select(id=ids.DATASETS_SELECT, options=[], placeholder="choose a dataset",
                       size="sm", class_name="me-2", style={"maxWidth": "22rem"}),
            dbc.Button("Use in config editor", id=ids.DATASETS_USE, size="sm",
                       color="primary", disabled=True),
        ], className="d-flex align-items-center mb-2"),
        html.Div(id=ids.DATASETS_USE_MSG, className="small mb-2"),
        html.Div(id=ids.DATASETS_PREVIEW),
        html.Div(id=ids.DATASETS_FILES, className="mt-2"), class_name="mb-3")


def _new_card() -> dbc.Card:
    return card(
        "New dataset (python -m bin.prepare_data)",
        dbc.Row([
            field("Name", dbc.Input(id=ids.DATASETS_NEW_NAME, size="sm", placeholder="my-corpus"), md=4),
            field("Validation fraction", dbc.Input(id=ids.DATASETS_NEW_VAL, type="number", value=0.05,
                                                   min=0.001, max=0.499, step="any", size="sm"), md=4),
            field("Max bytes", dbc.Input(id=ids.DATASETS_NEW_MAX, type="number", value=16_000_000,
                                         min=1024, step=1, size="sm"), md=4),
        ], class_name="g-2 mb-2"),
        field("Sources: files or folders on the cockpit's machine, one per line (relative paths: the "
              "folder the cockpit was started from; none: the Python standard library corpus); end "
              "a line with @W to weigh that source W times in training",
              dbc.Textarea(id=ids.DATASETS_NEW_SOURCES, rows=3, size="sm",
                           placeholder="/path/to/folder @2\n/path/to/file.txt", class_name="mb-2")),
        job_buttons("Create dataset", ids.DATASETS_CREATE, ids.DATASETS_CANCEL, cancel="Cancel build",
                    colour="success", cancel_colour="danger", class_name="mb-2"),
        html.Div(id=ids.DATASETS_BUILD_MSG, className="small mb-2", role="status"),
        html.Pre(id=ids.DATASETS_CONSOLE, className="dataset-console p-2 mb-0",
                 style={"minHeight": "4rem"}), class_name="mb-3")


def layout() -> html.Div:
    return html.Div([
        dcc.Store(id=ids.DATASETS_JOB, storage_type="memory"),
        dcc.Store(id=ids.DATASETS_VERSION, storage_type="memory"),
        dcc.Interval(id=ids.DATASETS_POLL, interval=500, disabled=True),
        _list_card(),
        dbc.Row([dbc.Col(_preview_card(), xl=6), dbc.Col(_new_card(), xl=6)], class_name="g-3"),
    ], id="datasets-panel")
