"""Evaluation tab: evaluate a coding model (the shipped default, any model of
the store) or a checkpoint of the selected run as a compressor (enwik8 when the user has it, the
run's validation split otherwise) as a background job, with roundtrip verification, the classical
baselines on the same bytes, and the bpb history. Filled by gui/pages/evaluation/callbacks.py."""
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

DEFAULT_MAX_BYTES = 100_000


def layout() -> html.Div:
    form = card(
        "Evaluate a model or a checkpoint as a compressor",
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
        # disabled until the tab's first refresh has found a run with a checkpoint
        job_buttons("Run enwik8 Eval", ids.EVAL_ENWIK8_BTN, ids.EVAL_CANCEL_BTN, disabled=True),
        progress_bar(ids.EVAL_PROGRESS),
        html.Div(id=ids.EVAL_STATUS, className="mt-2"), class_name="mb-3")
    results = card(html.Div([
        html.Span("Evaluations of the selected run", className="me-auto"),
        html.Span("Roundtrip: ", className="small text-muted me-1"),
        html.Span(id=ids.EVAL_ROUNDTRIP_STATUS),
    ], className="d-flex align-items-center"), results_table(ids.EVAL_RESULTS_TABLE), class_name="mb-3")
    history = card("Bits per byte over evaluations",
                   dcc.Graph(id=ids.EVAL_BPB_HISTORY, config=graph_config("eval-bpb-history"),
                             figure=empty_fig("Loading ...", height=360)), class_name="")
    return html.Div([
        dcc.Store(id=ids.EVAL_VERSION, storage_type="memory"),
        dcc.Store(id=ids.EVAL_ACTION, storage_type="memory"),
        form, results, history,
    ], id="eval-panel", className="mt-2")
