"""Runs tab: every run (ours and Forge's) in a sortable list; rename, delete (after a dialog) and
notes of the run chosen in the top bar; open a Forge run folder."""
from __future__ import annotations

import dash_bootstrap_components as dbc
from dash import dash_table, dcc, html

from . import ids

RUN_COLUMNS = ("run", "kind", "status", "steps", "updated", "tags", "notes")   # header = id


def run_table() -> dash_table.DataTable:
    return dash_table.DataTable(
        id=ids.RUNS_TABLE, data=[], sort_action="native",
        # a filter row under the header ("crashed", "#baseline", ">1000" on steps), as W&B's
        filter_action="native", filter_options={"case": "insensitive"},
        columns=[{"name": c, "id": c, "type": "numeric" if c == "steps" else "text"} for c in RUN_COLUMNS],
        style_table={"overflowX": "auto", "maxHeight": "420px", "overflowY": "auto"},
        style_as_list_view=True, page_action="none",
        style_cell={"fontSize": "13px", "padding": "4px 8px", "fontFamily": "inherit",
                    "textAlign": "left", "cursor": "pointer"},
        # long names, crash messages and notes wrap rather than push steps/updated out of view
        style_cell_conditional=[{"if": {"column_id": c}, "whiteSpace": "normal", "height": "auto",
                                 "minWidth": w, "maxWidth": "320px"}
                                for c, w in (("run", "140px"), ("status", "160px"), ("notes", "140px"))],
        style_header={"fontWeight": "600", "backgroundColor": "#f8f9fa"})


def manage_card() -> dbc.Card:
    return dbc.Card([
        dbc.CardHeader(html.Div(["Selected run: ", html.Strong(id=ids.RUNS_SELECTED)])),
        dbc.CardBody([
            dbc.InputGroup([
                dbc.Input(id=ids.RUNS_RENAME_INPUT, placeholder="new name", size="sm"),
                dbc.Button("Rename", id=ids.RUNS_RENAME_BTN, color="secondary", size="sm", outline=True),
                dbc.Button("Delete...", id=ids.RUNS_DELETE_BTN, color="danger", size="sm", outline=True),
            ], size="sm", class_name="mb-2"),
            dbc.Label("Notes (saved in the run folder as notes.md)", html_for=ids.RUNS_NOTES,
                      class_name="small mb-0"),
            dbc.Textarea(id=ids.RUNS_NOTES, rows=5, class_name="mb-2 small",
                         placeholder="what this run tries, what you saw... (#tags anywhere "
                                     "are listed and filterable in the table)"),
            dbc.Button("Save notes", id=ids.RUNS_NOTES_SAVE, color="primary", size="sm"),
            html.Div(id=ids.RUNS_MESSAGE, className="small mt-2", role="status"),
        ]),
    ], class_name="mb-3")


def forge_card() -> dbc.Card:
    return dbc.Card([
        dbc.CardHeader("Open a Forge run folder (read-only)"),
        dbc.CardBody([
            dbc.InputGroup([
                dbc.Input(id=ids.FORGE_PATH, placeholder="/path/to/forge/out (holds log.csv)", size="sm"),
                dbc.Button("Open", id=ids.FORGE_OPEN_BTN, color="secondary", size="sm"),
            ], size="sm", class_name="mb-1"),
            html.Div("Forge folders inside the runs folder (log.csv and ckpt_*.bin, no "
                     "status.json) are listed without this.", className="form-text"),
            html.Div(id=ids.FORGE_MESSAGE, className="small", role="status"),
        ]),
    ])


def delete_modal() -> dbc.Modal:
    return dbc.Modal([
        dbc.ModalHeader(dbc.ModalTitle("Delete run?")),
        dbc.ModalBody(id=ids.RUNS_DELETE_BODY),
        dbc.ModalFooter([
            dbc.Button("Cancel", id=ids.RUNS_DELETE_CANCEL, color="secondary", outline=True),
            dbc.Button("Delete", id=ids.RUNS_DELETE_CONFIRM, color="danger"),
        ]),
    ], id=ids.RUNS_DELETE_MODAL, is_open=False)


def layout() -> html.Div:
    return html.Div([
        dcc.Store(id=ids.RUNS_DELETE_TARGET, storage_type="memory"),
        delete_modal(),
        # the table gets the full width (long messages and notes); the two cards sit under it
        dbc.Card([dbc.CardHeader("Runs (click a row to select it)"), dbc.CardBody(run_table())],
                 class_name="mb-3"),
        dbc.Row([dbc.Col(manage_card(), lg=6), dbc.Col(forge_card(), lg=6)], class_name="g-3"),
    ])
