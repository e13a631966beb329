"""Generate / playground tab: sample from the selected run's checkpoint, streamed, and
colour any text by the model's per-byte surprisal."""
from __future__ import annotations

import dash_bootstrap_components as dbc
from dash import dcc, html

from ... import ids as common
from ...components.analysis_widgets import card
from ...components.coding_controls import field, job_buttons
from ...surprisal import legend
from . import ids

POLL_MS = 300


def _number(label: str, cid: str, value, **kw) -> dbc.Col:
    return field(label, dbc.Input(id=cid, type="number", value=value, size="sm", **kw), xs=6, md=3)


def _sample_card() -> dbc.Card:
    return card(
        "Sample",
        dbc.Textarea(id=ids.GEN_PROMPT, rows=3, size="sm", class_name="mb-2",
                     placeholder="prompt (may be empty)", value="def "),
        dbc.Row([
            _number("Temperature (0 = greedy)", ids.GEN_TEMPERATURE, 0.8, min=0, max=5, step="any"),
            _number("Top-k (0 = off)", ids.GEN_TOP_K, 40, min=0, max=256, step=1),
            _number("Max bytes", ids.GEN_MAX_BYTES, 400, min=1, max=4096, step=1),
            _number("Seed", ids.GEN_SEED, 0, min=0, step=1),
        ], class_name="g-2 mb-2"),
        job_buttons("Generate", ids.GEN_START, ids.GEN_CANCEL, colour="success", cancel_colour="danger",
                    disabled=True, class_name="mb-2"),
        html.Div(id=ids.GEN_STATUS, className="small mb-2", role="status"),
        html.Pre(id=ids.GEN_OUTPUT, className="generate-output border rounded p-2 mb-0",
                 style={"minHeight": "4rem"}), class_name="mb-3")


def _surprisal_card() -> dbc.Card:
    return card(
        "Surprisal: what the compressor sees",
        html.P("Paste text: each byte is coloured by -log2 p(byte | the bytes before it) under the "
               "model, its cost in bits to the coder (8 bits = no better than storing it raw). "
               "Hover a character for its bits.", className="small text-muted mb-2"),
        dbc.Textarea(id=ids.SURPRISAL_TEXT, rows=5, size="sm", class_name="mb-2",
                     placeholder="text to score (up to 8 KB)"),
        job_buttons("Score", ids.SURPRISAL_BTN, ids.SURPRISAL_CANCEL, cancel_colour="danger",
                    disabled=True, class_name="mb-2"),
        html.Div(id=ids.SURPRISAL_STATUS, className="small mb-2", role="status"),
        legend(),
        html.Div(id=ids.SURPRISAL_SUMMARY, className="small my-2"),
        html.Div(id=ids.SURPRISAL_VIEW, className="surprisal-text border rounded p-2"), class_name="mb-3")


def layout() -> html.Div:
    return html.Div([
        dcc.Store(id=ids.GEN_JOB, storage_type="memory"),
        dcc.Store(id=ids.SURPRISAL_JOB, storage_type="memory"),
        dcc.Interval(id=ids.GEN_POLL, interval=POLL_MS, disabled=True),
        dcc.Interval(id=ids.SURPRISAL_POLL, interval=POLL_MS, disabled=True),
        dbc.Card(dbc.CardBody(dbc.Row([
            dbc.Col(html.Div(id=ids.GEN_INFO, className="small"), md=8),
            dbc.Col(dcc.Dropdown(id=common.GEN_CHECKPOINT, options=[], clearable=False,
                                 placeholder="no checkpoints"), md=4),
        ], class_name="align-items-center")), class_name="mb-3"),
        dbc.Row([dbc.Col(_sample_card(), xl=6), dbc.Col(_surprisal_card(), xl=6)],
                class_name="g-3"),
    ], id="generate-panel")
