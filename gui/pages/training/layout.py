"""Training tab: KPIs, ETA, loss chart (EMA / running mean / none, outlier clipping, log y,
clickable checkpoint markers), lr and throughput charts, head losses, checkpoints with resume and
Export model, log tail."""
from __future__ import annotations

import time
from functools import partial

import dash_bootstrap_components as dbc
from dash import dcc, html

from umoec.units import fmt_bytes

from ... import ids as common
from ...components.analysis_widgets import metric_card
from ...figures.base import graph_config
from . import ids

LOG_STYLE = {"fontSize": "11px"}
# the scroll box lays its content out bottom-up, so it opens (and stays) at the newest lines
LOG_BOX_STYLE = {"maxHeight": "300px", "overflowY": "auto", "display": "flex",
                 "flexDirection": "column-reverse"}


kpi_card = partial(metric_card, widths={"xs": 6, "md": 4, "xl": 2})   # six to a row


def clock(mtime: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(mtime))


def checkpoint_table(rows, extra_heads: tuple = ()) -> html.Div:
    """Checkpoints as a scrolling table; `rows`: (step text, size, mtime, file, extra cells...)."""
    body = [html.Tr([html.Td(step), html.Td(fmt_bytes(size)), html.Td(clock(mtime)),
                     html.Td(file, className="font-monospace small"), *map(html.Td, extra)])
            for step, size, mtime, file, *extra in rows]
    head = html.Thead(html.Tr([html.Th(h) for h in ("step", "size", "time", "file", *extra_heads)]))
    return html.Div(dbc.Table([head, html.Tbody(body)], size="sm", class_name="mb-0 align-middle"),
                    style={"maxHeight": "260px", "overflowY": "auto"})


KEEP = {"persistence": True, "persistence_type": "local"}   # the browser remembers the choice
SMOOTH_METHODS = [{"label": label, "value": value}
                  for value, label in (("ema", "EMA"), ("mean", "running mean"), ("none", "none"))]


def chart_controls() -> html.Div:
    """Smoothing (computed on every row: gui/figures/series.Smoothing): the method, its strength
    (the EMA's factor, or the running mean's window round(1 / (1 - s)); disabled for "none"),
    outlier clipping; and a log-scale toggle."""
    return html.Div([
        dbc.RadioItems(id=ids.TRAINING_SMOOTH_METHOD, options=SMOOTH_METHODS, value="ema",
                       inline=True, class_name="small me-2", **KEEP),
        html.Span("smoothing", className="small text-muted me-2",
                  title="EMA: the factor a. Running mean: a window of round(1 / (1 - a)) rows "
                        "(0.9 -> 10, 0.95 -> 20, 0.99 -> 100). The legend names the choice."),
        html.Div(dcc.Slider(id=ids.TRAINING_SMOOTHING, min=0.0, max=0.99, step=0.01, value=0.6,
                            marks={0: "0", 0.5: "0.5", 0.99: "0.99"}, updatemode="mouseup", **KEEP),
                 style={"width": "260px"}),
        *(dbc.Switch(id=switch, label=label, value=False, class_name="ms-3 mb-0 small", **KEEP)
          for switch, label in ((ids.TRAINING_CLIP, "clip outliers"), (ids.TRAINING_LOGY, "log y"))),
        dbc.Switch(id=ids.TRAINING_FOLLOW, label="follow live", value=True,
                   class_name="ms-3 mb-0 small"),  # zoom.py
        dbc.Button("CSV", id=ids.TRAINING_CSV_BTN, size="sm", color="secondary", outline=True,
                   class_name="ms-3 py-0", title="every logged row of this run as CSV"),
        dcc.Download(id=ids.TRAINING_CSV),
        dbc.Button("Report", id=ids.TRAINING_REPORT_BTN, size="sm", color="secondary",
                   outline=True, class_name="ms-2 py-0",
                   title="charts, config, evaluations and compression jobs in one HTML file "
                         "that opens with no server"),
        dcc.Download(id=ids.TRAINING_REPORT),
    ], className="d-flex align-items-center flex-wrap")


def checkpoint_hint() -> html.Div:
    """Under the loss chart until a marker is clicked (then what the click selected)."""
    return html.Div("Click a checkpoint's marker (the triangles under the curves) to select it "
                    "for resume, compression, evaluation and generation.",
                    className="text-muted small")


RESUME_SHOWN = "d-flex align-items-center mb-2"
RESUME_HIDDEN = "d-none"   # a class: Bootstrap's d-flex (!important) would beat an inline display


def resume_controls() -> html.Div:
    return html.Div([
        dcc.Dropdown(id=common.RESUME_CHECKPOINT, options=[], clearable=False,
                     placeholder="no checkpoints", style={"minWidth": "220px"},
                     className="flex-grow-1 me-2"),
        dbc.Button("Resume", id=common.RESUME_BTN, color="primary", size="sm", disabled=True),
    ], id=ids.RESUME_CONTROLS, className=RESUME_SHOWN)


def _card(header, body, lg: int) -> dbc.Col:
    return dbc.Col(dbc.Card([dbc.CardHeader(header), dbc.CardBody(body)]), lg=lg)


def _graph(graph_id: str, name: str) -> dcc.Graph:
    return dcc.Graph(id=graph_id, config=graph_config(name))


def layout() -> html.Div:
    stores = (ids.TRAINING_CHART_STATE, ids.TRAINING_ZOOM, ids.TRAINING_ZOOM_SEEN,
              common.x_zoom(ids.TRAINING_LOSS), ids.TRAINING_XSYNC, ids.CHECKPOINT_EXPORT_ACTION,
              ids.TRAINING_SYSTEM_STATE)
    loss_header = html.Div([html.Span("Training loss", className="me-auto text-nowrap pe-2"),
                            chart_controls()], className="d-flex align-items-center")
    return html.Div([
        *(dcc.Store(id=store, storage_type="memory") for store in stores),
        html.Div(id=ids.TRAINING_ERROR),
        dbc.Row(id=ids.TRAINING_KPIS, class_name="g-2"),
        html.Div(id=ids.TRAINING_ETA, className="text-muted mb-2"),
        dbc.Row([_card(loss_header, [_graph(ids.TRAINING_LOSS, "training-bpb"),
                                     html.Div(checkpoint_hint(), id=ids.TRAINING_CHECKPOINT_NOTE)], 8),
                 _card("Loss per head (latest step)", html.Div(id=ids.TRAINING_HEADS), 4)],
                class_name="g-3 mb-3"),
        dbc.Row([_card("Learning rate and gradient norm", _graph(ids.TRAINING_LR, "training-lr"), 8),
                 _card("Checkpoints", [resume_controls(), html.Div(id=ids.CHECKPOINT_LIST),
                                       html.Div(id=ids.CHECKPOINT_EXPORT_STATUS, className="mt-2")], 4)],
                class_name="g-3 mb-3"),
        dbc.Row([_card("System (the run's process, sampled at each logged step)",
                       _graph(ids.TRAINING_SYSTEM, "training-system"), 8),
                 _card("Throughput (tokens/s; a token is a byte in our runs)",
                       _graph(ids.TRAINING_THROUGHPUT, "training-throughput"), 4)],
                class_name="g-3 mb-3"),
        dbc.Card([dbc.CardHeader("Run log, last 100 lines (training.log; log.csv for a Forge run)"),
                  dbc.CardBody(html.Div(html.Pre(id=ids.LOG_TAIL, style=LOG_STYLE, className="mb-0"),
                                        style=LOG_BOX_STYLE))]),
    ])
