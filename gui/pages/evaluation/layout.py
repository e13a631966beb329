"""Evaluation tab: evaluate a coding model (the shipped default, any model of
the store) or a checkpoint of the selected run as a compressor (enwik8 when the user has it, the
run's validation split otherwise) as a background job, with roundtrip verification, the classical
baselines on the same bytes, and the bpb history. Filled by gui/pages/evaluation/callbacks.py."""
from __future__ import annotations

import dash_bootstrap_components as dbc
from dash import dcc, html

from ... import ids as common
from ...components.coding_controls import labelled, model_controls, profile_options, progress_bar
from ...figures.base import empty_fig, graph_config
from . import ids

DEFAULT_MAX_BYTES = 100_000


def layout() -> html.Div:
    form = dbc.Card([dbc.CardHeader("Evaluate a model or a checkpoint as a compressor"),
                     dbc.CardBody([
        *model_controls(common.EVAL_MODEL, ids.EVAL_MODEL_NOTE, common.EVAL_CHECKPOINT,
                        "is evaluated"),
        dbc.Row([
            labelled("Max bytes", dbc.Input(
                id=ids.EVAL_MAX_BYTES, type="number", min=0, step=1, value=DEFAULT_MAX_BYTES,
                size="sm", persistence=True, persistence_type="local"), 6,
                "first N bytes; 0 = all (enwik8 whole takes hours on a CPU)"),
            labelled("Profile", dcc.Dropdown(id=ids.EVAL_PROFILE, options=profile_options(auto=False),
                                             value="turbo", clearable=False), 6),
        ], class_name="g-2 mt-1"),
        html.Div(id=ids.EVAL_DATA_NOTE, className="small text-muted mt-2"),
        html.Div([
            # disabled until the tab's first refresh has found a run with a checkpoint
            dbc.Button("Run enwik8 Eval", id=ids.EVAL_ENWIK8_BTN, color="primary", size="sm",
                       class_name="me-2", disabled=True),
            dbc.Button("Cancel", id=ids.EVAL_CANCEL_BTN, color="secondary", size="sm",
                       outline=True, disabled=True),
        ], className="mt-3"),
        progress_bar(ids.EVAL_PROGRESS),
        html.Div(id=ids.EVAL_STATUS, className="mt-2"),
    ])], class_name="mb-3")
    results = dbc.Card([
        dbc.CardHeader(html.Div([
            html.Span("Evaluations of the selected run", className="me-auto"),
            html.Span("Roundtrip: ", className="small text-muted me-1"),
            html.Span(id=ids.EVAL_ROUNDTRIP_STATUS),
        ], className="d-flex align-items-center")),
        dbc.CardBody(html.Div(dbc.Table(id=ids.EVAL_RESULTS_TABLE, size="sm", hover=True,
                                        class_name="mb-0 small align-middle"),
                              className="table-responsive")),
    ], class_name="mb-3")
    history = dbc.Card([dbc.CardHeader("Bits per byte over evaluations"),
                        dbc.CardBody(dcc.Graph(id=ids.EVAL_BPB_HISTORY,
                                               config=graph_config("eval-bpb-history"),
                                               figure=empty_fig("Loading ...", height=360)))])
    return html.Div([
        dcc.Store(id=ids.EVAL_VERSION, storage_type="memory"),
        dcc.Store(id=ids.EVAL_ACTION, storage_type="memory"),
        form, results, history,
    ], id="eval-panel", className="mt-2")
