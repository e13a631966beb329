"""The Training tab for a Forge run folder, read-only.

training_callbacks.training_update hands Forge runs (gui/forge.py) to `forge_training_update`,
which returns the same outputs: KPIs from the newest log.csv row, the loss chart (Forge's loss in
bits per *token* = loss / ln 2, raw, smoothed and validation, best point starred; same trace order
as ours so the zoom re-aggregation works unchanged), lr and gradient norm, tokens/s, the
ckpt_*.bin list, and the tail of log.csv in place of training.log. No resume (the cockpit does
not drive Forge), no per-head losses (Forge logs one). The charts are redrawn only when log.csv changed.
"""
from __future__ import annotations

import math
import os
import time
from typing import Any, Optional

import dash_bootstrap_components as dbc
import pandas as pd
from dash import html, no_update

from .. import forge
from ..derived import fmt_bytes
from ..figures.base import empty_fig
from ..figures.series import MAX_POINTS, Smoothing
from ..figures.training import loss_fig, lr_grad_fig, throughput_fig
from ..panels.training_panel import kpi_card

LN2 = math.log(2.0)
KEYS = ("kpis", "eta", "loss", "lr", "throughput", "heads", "checkpoints", "log", "error", "state",
        "ck_options", "ck_value")


def _duration(seconds: float) -> str:
    seconds = int(max(0, seconds))
    h, rem = divmod(seconds, 3600)
    m, s = divmod(rem, 60)
    return f"{h}h {m:02d}m {s:02d}s" if h else f"{m}m {s:02d}s"


def kpis(train: pd.DataFrame) -> list:
    if train.empty:
        return [dbc.Col(html.Div("log.csv has no rows yet.", className="text-muted"))]
    last = train.iloc[-1]
    elapsed = last["elapsed_s"]
    return [
        kpi_card("step", f"{int(last['step']):,}", "Forge run"),
        kpi_card("train loss", f"{last['loss']:.4f}", f"{last['loss'] / LN2:.3f} bits/token"),
        kpi_card("learning rate", f"{last['lr']:.2e}", ""),
        kpi_card("tokens / s", f"{last['tokens_per_sec']:,.0f}", "training throughput"),
        kpi_card("grad norm", f"{last['grad_norm']:.3f}", ""),
        kpi_card("elapsed", _duration(elapsed) if pd.notna(elapsed) else "n/a",
                 "" if pd.notna(elapsed) else "older log.csv: no elapsed_s column"),
    ]


def checkpoint_table(cks: list[forge.ForgeCheckpoint]) -> Any:
    if not cks:
        return html.Div("No ckpt_*.bin yet.", className="text-muted")
    rows = [html.Tr([html.Td(f"{c.step:,}" if c.step is not None else "latest"),
                     html.Td(fmt_bytes(c.size)),
                     html.Td(time.strftime("%H:%M:%S", time.localtime(c.mtime))),
                     html.Td(c.name, className="font-monospace small")]) for c in reversed(cks)]
    return html.Div(dbc.Table([html.Thead(html.Tr([html.Th("step"), html.Th("size"),
                                                   html.Th("time"), html.Th("file")])),
                               html.Tbody(rows)], size="sm", class_name="mb-0"),
                    style={"maxHeight": "260px", "overflowY": "auto"})


def log_tail(path, n: int = 100, max_bytes: int = 64 * 1024) -> str:
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - max_bytes))
            lines = fh.read().decode("utf-8", errors="replace").splitlines()
    except OSError as exc:
        return f"(cannot read log.csv: {exc.strerror or exc})"
    if size > max_bytes and lines:
        lines = lines[1:]
    return "\n".join(lines[-n:]) or "(log.csv is empty)"


def loss_figure(log: forge.ForgeLog, smoothing: Smoothing, log_y: bool):
    train = pd.DataFrame({"step": log.train["step"], "bpb": log.train["loss"] / LN2})
    val = pd.DataFrame({"step": log.val["step"], "bpb": log.val["val_loss"] / LN2})
    fig = loss_fig(train, val, smoothing, log_y, max_points=MAX_POINTS)
    if train.empty:
        return fig
    fig.data[0].name = "train bits/token"
    fig.data[1].name = f"train bits/token ({smoothing.label()})"
    fig.data[2].name = "val bits/token"
    fig.update_layout(yaxis_title="bits per token (Forge loss / ln 2)")
    return fig


def forge_training_update(run: forge.ForgeRun, smoothing: Smoothing, log_y: bool,
                          state: Optional[dict]) -> dict[str, Any]:
    """The Training tab's outputs for a Forge run (see training_callbacks.OUTPUT_ORDER)."""
    # a string: the browser keeps numbers as doubles, and st_mtime_ns (~1.8e18) > 2**53 would
    # come back rounded, never equal, and the run be redrawn (and a zoom undone) every tick
    sig = "-".join(str(v) for v in (run.signature() or (-1, -1)))
    if (state and state.get("run") == run.key and state.get("forge_sig") == sig
            and Smoothing.from_state(state) == smoothing and state.get("log_y") == log_y):
        return {k: no_update for k in KEYS}
    common = dict(eta=f"{run.status_label()}. The cockpit reads this folder and never writes "
                      "to it; resume it with forge train --resume.",
                  heads=html.Div("Forge logs a single loss (no per-head losses).",
                                 className="text-muted"),
                  checkpoints=checkpoint_table(run.checkpoints()),
                  log="# log.csv (Forge writes no training.log)\n" + log_tail(run.log_path),
                  ck_options=[], ck_value=None)
    try:
        log = run.read_log()
    except forge.ForgeFormatError as exc:
        empty = empty_fig("log.csv cannot be read")
        return dict(common, kpis=[], loss=empty, lr=empty, throughput=empty,
                    error=dbc.Alert(str(exc), color="danger", class_name="py-2 mb-2"),
                    state={"run": run.key, "forge_sig": sig})
    train = log.train
    lr = lr_grad_fig(train[["step", "lr", "grad_norm"]], max_points=MAX_POINTS,
                     lr_label="lr")
    info = [html.Strong(f"{run.label}: "), f"{run.path}. ",
            f"log.csv columns {','.join(log.columns)}; {len(train):,} steps"]
    if log.notes:
        info.append(" (" + "; ".join(log.notes) + ")")
    info.append(". Loss is in nats per token, so the chart shows bits per token, not per byte.")
    return dict(common, kpis=kpis(train), loss=loss_figure(log, smoothing, log_y), lr=lr,
                throughput=throughput_fig(train[["step", "tokens_per_sec"]], max_points=MAX_POINTS),
                error=dbc.Alert(info, color="secondary", class_name="py-2 mb-2 small"),
                state={"run": run.key, "forge_sig": sig, **smoothing.as_state(), "log_y": log_y,
                       "gen": f"forge-{sig}",
                       "last_step": int(train["step"].iloc[-1]) if len(train) else None,
                       "points": min(len(train), MAX_POINTS)})
