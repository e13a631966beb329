"""Compression tab: compress a file (path or upload) with a coding model (the
shipped default preselected, any model of the store, or a checkpoint of the selected run) as a
background job, compare with the classical compressors on the same file (gzip, zstd -22, xz, brotli;
PPMd, zpaq -m5, bzip3, paq9a where installed: umoec/compress/worker.py), and verify the round trip
(sha256). Filled by callbacks.py."""
from __future__ import annotations

import dash_bootstrap_components as dbc
from dash import dcc, html

from ... import ids as common
from ...components.analysis_widgets import card
from ...components.coding_controls import (
    job_buttons,
    labelled,
    model_controls,
    profile_options,
    progress_bar,
    results_table,
)
from ...figures.base import empty_fig, graph_config
from . import ids

UPLOAD_STYLE = {"borderWidth": "1px", "borderStyle": "dashed", "borderRadius": "6px",
                "textAlign": "center", "padding": "10px", "cursor": "pointer",
                "borderColor": "#adb5bd"}


def layout() -> html.Div:
    job_form = card(
        "Compress a file",
        dbc.Row([
            labelled("File path", dcc.Input(
                id=ids.COMPRESS_FILE_PATH, type="text", placeholder="/path/to/file.bin",
                className="form-control form-control-sm", debounce=False, persistence=True,
                persistence_type="local"), 7,
                "Any file the cockpit's user can read: the cockpit reads what is named here (so "
                "it serves loopback only, or needs a token)."),
            labelled("... or upload one", dcc.Upload(
                id=ids.COMPRESS_FILE_UPLOAD, multiple=False, style=UPLOAD_STYLE,
                children=html.Div(["Drop a file here or ", html.A("choose one", href="#")],
                                  className="small")), 5),
        ], class_name="g-2"),
        html.Div(id=ids.COMPRESS_UPLOAD_HINT, className="form-text mb-1"),
        html.Div(id=ids.COMPRESS_UPLOAD_STATUS),
        *model_controls(common.COMPRESS_MODEL, ids.COMPRESS_MODEL_NOTE, common.COMPRESS_CHECKPOINT,
                        "compresses"),
        dbc.Row([
            labelled("Profile", dcc.Dropdown(id=ids.COMPRESS_PROFILE, options=profile_options(),
                                             value="turbo", clearable=False, persistence=True,
                                             persistence_type="local"), 12),
        ], class_name="g-2 mt-1"),
        job_buttons("Compress", ids.COMPRESS_BTN, ids.COMPRESS_CANCEL_BTN),
        progress_bar(ids.COMPRESS_PROGRESS),
        html.Div(id=ids.COMPRESS_STATUS, className="mt-2"), class_name="mb-3")
    results = card("Compression jobs of the selected run (newest first)",
                   results_table(ids.COMPRESS_RESULTS_TABLE), class_name="mb-3")
    compare = dbc.Row([
        dbc.Col(card("Compared on the same file",
                     dcc.Dropdown(id=ids.COMPRESS_JOB_SELECT, options=[], clearable=False,
                                  placeholder="no finished job yet", className="mb-2"),
                     dcc.Graph(id=ids.COMPRESS_COMPARISON, config=graph_config("compression"),
                               figure=empty_fig("Loading ...", height=260)), class_name=""), lg=8),
        dbc.Col(card(
            "Round trip",
            html.P("Decompress the chosen job's .umc file with the model it names (found by "
                   "its hash) and compare the sha256 of the result with the original's.",
                   className="small text-muted"),
            dbc.Button("Verify Roundtrip", id=ids.COMPRESS_VERIFY_BTN, color="success",
                       size="sm", outline=True, disabled=True),
            html.Div(id=ids.COMPRESS_VERIFY_RESULT, className="mt-3"), class_name=""), lg=4),
    ], class_name="g-3")
    return html.Div([
        *(dcc.Store(id=i, storage_type="memory")
          for i in (ids.COMPRESS_VERSION, ids.COMPRESS_UPLOAD_PICKED, ids.COMPRESS_ACTION)),
        job_form, results, compare,
    ], id="compression-panel", className="mt-2")
