"""Training tab: every tick, read the selected run's metrics and redraw KPIs, charts and logs."""
from __future__ import annotations

import math
import sqlite3
from pathlib import Path

import dash_bootstrap_components as dbc
from dash import Input, Output, html

from .. import db, ids, viz_utils
from ..panels.training_panel import kpi_card
from ..runs import resolve, summarise
from umoec.run import RunState

LN2 = math.log(2.0)

def _fmt_bytes(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if abs(n) < 1000 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000.0
    return f"{n:.1f} TB"


def _fmt_duration(seconds: float) -> str:
    seconds = int(max(0, seconds))
    h, rem = divmod(seconds, 3600)
    m, s = divmod(rem, 60)
    return f"{h}h {m:02d}m {s:02d}s" if h else f"{m}m {s:02d}s"


def kpis(latest: dict | None, total_steps: int) -> list:
    if latest is None:
        return [dbc.Col(html.Div("No metrics yet.", className="text-muted"))]
    return [
        kpi_card("step", f"{int(latest['step']):,}", f"of {total_steps:,}" if total_steps else ""),
        kpi_card("train bpb", f"{latest['bpb']:.3f}", f"loss {latest['loss']:.4f} nats/byte"),
        kpi_card("learning rate", f"{latest['lr']:.2e}", "AdamW group"),
        kpi_card("bytes / s", f"{latest['tokens_per_sec']:,.0f}", "training throughput"),
        kpi_card("grad norm", f"{latest['grad_norm']:.3f}", "before clipping"),
        kpi_card("bytes seen", _fmt_bytes(latest["bytes_seen"]),
                 f"elapsed {_fmt_duration(latest['elapsed_s'])}"),
    ]


def eta_text(train, state: RunState, total_steps: int) -> str:
    """Remaining time from the recent step rate (last ~20 logged rows)."""
    if train.empty:
        return ""
    if state is not RunState.RUNNING:
        return f"Run is {state.value}; no ETA."
    recent = train.tail(20)
    d_step = recent["step"].iloc[-1] - recent["step"].iloc[0]
    d_time = recent["elapsed_s"].iloc[-1] - recent["elapsed_s"].iloc[0]
    if d_step <= 0 or d_time <= 0:
        return "ETA: measuring..."
    rate = d_step / d_time
    left = max(0, total_steps - int(recent["step"].iloc[-1]))
    return f"ETA {_fmt_duration(left / rate)} ({rate:.2f} steps/s, {left:,} steps left)"


def heads_table(heads) -> object:
    if heads.empty:
        return html.Div("No per-head losses yet.", className="text-muted")
    rows = [html.Tr([html.Td(h), html.Td(f"{loss:.4f}"), html.Td(f"{loss / LN2:.3f}")])
            for h, loss in zip(heads["head"], heads["loss"], strict=True)]
    return dbc.Table([html.Thead(html.Tr([html.Th("head"), html.Th("loss (nats)"),
                                          html.Th("bpb")])), html.Tbody(rows)],
                     size="sm", striped=True, class_name="mb-0")


def checkpoint_list(run) -> object:
    cks = run.checkpoints()
    if not cks:
        return html.Div("No checkpoints yet.", className="text-muted")
    return dbc.Table([html.Thead(html.Tr([html.Th("step"), html.Th("size"), html.Th("file")])),
                      html.Tbody([html.Tr([html.Td(f"{c.step:,}"), html.Td(_fmt_bytes(c.size)),
                                           html.Td(c.path.name)]) for c in reversed(cks)])],
                     size="sm", class_name="mb-0")


def register(app) -> None:
    runs_dir = Path(app.server.config["UMOEC_RUNS_DIR"])
    outputs = [Output(ids.TRAINING_KPIS, "children"), Output(ids.TRAINING_ETA, "children"),
               Output(ids.TRAINING_LOSS, "figure"), Output(ids.TRAINING_LR, "figure"),
               Output(ids.TRAINING_HEADS, "children"), Output(ids.CHECKPOINT_LIST, "children"),
               Output(ids.LOG_TAIL, "children"), Output(ids.TRAINING_ERROR, "children")]

    @app.callback(*outputs, Input(ids.REFRESH, "n_intervals"), Input(ids.RUN_SELECT, "value"))
    def refresh(_n, name):
        run = resolve(runs_dir, name)
        if run is None:
            msg = ("No run selected. Create one with: python -m bin.simulate_training "
                   f"--steps 5000 --out {runs_dir / 'demo'}")
            empty = viz_utils.empty_fig("No run selected")
            return [], "", empty, empty, "", "", "", dbc.Alert(msg, color="info")
        summary = summarise(run)
        log_tail = "\n".join(run.tail_log(100)) or "(training.log is empty)"
        try:
            with db.open_db(run.db_path) as conn:
                train = db.train_metrics(conn)
                val = db.val_metrics(conn)
                heads = db.head_losses_at(conn)
                latest = db.latest_metrics(conn)
        except (FileNotFoundError, sqlite3.Error) as exc:
            empty = viz_utils.empty_fig("Metrics unavailable")
            return ([], "", empty, empty, "", checkpoint_list(run), log_tail,
                    dbc.Alert(f"Cannot read {run.db_path}: {exc}", color="danger"))
        total = summary.total_steps
        return (kpis(latest, total), eta_text(train, summary.state, total),
                viz_utils.loss_fig(train, val), viz_utils.lr_grad_fig(train), heads_table(heads),
                checkpoint_list(run), log_tail, None)
