"""The Training tab for a Forge run folder, read-only: `forge_training_update` returns the same
outputs as callbacks.training_update, from log.csv (the loss in bits per *token* = loss / ln 2,
same trace order as ours so the zoom works unchanged), the ckpt_*.bin list (their markers cannot
be resumed or coded here) and the tail of log.csv in place of training.log. No resume, no
per-head losses. The charts are redrawn only when log.csv or the checkpoints changed otherwise
than by appended rows, which extend them by Patch (live.py), so a held zoom survives a live run.
"""
from __future__ import annotations

from typing import Any

import dash_bootstrap_components as dbc
import numpy as np
import pandas as pd
from dash import html, no_update

from umoec.run.forge import ForgeCheckpoint, ForgeFormatError, ForgeLog, log_tail
from umoec.units import LN2

from ...figures.base import empty_fig
from ...figures.series import MAX_POINTS, Smoothing, smooth_continue
from ...figures.training import loss_fig, lr_grad_fig, throughput_fig
from ...services import forge
from ...view.training import fmt_duration
from .layout import checkpoint_table, kpi_card
from .live import REDRAW_AFTER, extend_train, extend_val

KEYS = ("kpis", "eta", "loss", "lr", "throughput", "heads", "checkpoints", "log", "error", "state",
        "ck_options", "ck_value")


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
        kpi_card("elapsed", fmt_duration(elapsed) if pd.notna(elapsed) else "n/a",
                 "" if pd.notna(elapsed) else "older log.csv: no elapsed_s column"),
    ]


def checkpoint_list(cks: list[ForgeCheckpoint]) -> Any:
    if not cks:
        return html.Div("No ckpt_*.bin yet.", className="text-muted")
    return checkpoint_table([(f"{c.step:,}" if c.step is not None else "latest", c.size, c.mtime,
                              c.name) for c in reversed(cks)])


def loss_figure(log: ForgeLog, smoothing: Smoothing, log_y: bool, cks: tuple = (),
                smoothed: np.ndarray | None = None):
    train = pd.DataFrame({"step": log.train["step"], "bpb": log.train["loss"] / LN2})
    val = pd.DataFrame({"step": log.val["step"], "bpb": log.val["val_loss"] / LN2})
    fig = loss_fig(train, val, smoothing, log_y, max_points=MAX_POINTS,
                   checkpoints=[(c.step, c.name, c.size, c.mtime) for c in cks
                                if c.step is not None],   # ckpt_latest.bin has no step
                   smoothed=smoothed)
    if train.empty:
        return fig
    fig.data[0].name = "train bits/token"
    fig.data[1].name = f"train bits/token ({smoothing.label()})"
    fig.data[2].name = "val bits/token"
    fig.update_layout(yaxis_title="bits per token (Forge loss / ln 2)")
    return fig


def _extend_charts(log: ForgeLog, state: dict, smoothing: Smoothing):
    """(loss, lr, throughput Patches, new state) with the rows appended to log.csv since `state`
    was drawn; None when the log was not just appended to (a resume rewrote rows) or the traces
    are due to be downsampled again."""
    train, val = log.train, log.val
    rows, val_rows = state.get("rows"), state.get("val_rows")
    if (not rows or val_rows is None or "smooth" not in state or log.resumes != state.get("resumes")
            or len(train) < rows or int(train["step"].iloc[rows - 1]) != state.get("last_step")
            or len(val) < val_rows
            or (val_rows and int(val["step"].iloc[val_rows - 1]) != state.get("last_val_step"))
            or state.get("points", 0) + len(train) - rows >= REDRAW_AFTER):
        return None
    state = dict(state, rows=len(train))
    new = train.iloc[rows:]
    loss, lr, throughput = extend_train(new, (new["loss"] / LN2).to_numpy(dtype=float), smoothing,
                                        state)
    if len(val) > val_rows:
        added = val.iloc[val_rows:]
        best = val.loc[val["val_loss"].idxmin()]
        extend_val(loss, added["step"], added["val_loss"] / LN2,
                   (best["step"], best["val_loss"] / LN2))
        state.update(val_rows=len(val), last_val_step=int(val["step"].iloc[-1]))
    elif not len(new):
        loss = no_update
    return loss, lr, throughput, state


def forge_training_update(run: forge.ForgeRun, smoothing: Smoothing, log_y: bool,
                          state: dict | None) -> dict[str, Any]:
    """The Training tab's outputs for a Forge run (see callbacks.UPDATE)."""
    # a string: the browser keeps numbers as doubles, and st_mtime_ns (~1.8e18) > 2**53 would
    # come back rounded, never equal, and the run be redrawn (and a zoom undone) every tick
    cks = run.checkpoints()
    sig = "-".join([str(v) for v in (run.signature() or (-1, -1))]
                   + [f"{c.name}:{c.size}" for c in cks])
    same_view = (state and state.get("run") == run.key and state.get("log_y") == log_y
                 and Smoothing.from_state(state) == smoothing)
    if same_view and state.get("forge_sig") == sig:
        return {k: no_update for k in KEYS}
    common = dict(eta=f"{run.status_label()}. The cockpit reads this folder and never writes "
                      "to it; resume it with forge train --resume.",
                  heads=html.Div("Forge logs a single loss (no per-head losses).",
                                 className="text-muted"),
                  checkpoints=checkpoint_list(cks),
                  log="# log.csv (Forge writes no training.log)\n" + log_tail(run.log_path),
                  ck_options=[], ck_value=None)
    try:
        log = run.read_log()
    except ForgeFormatError as exc:
        empty = empty_fig("log.csv cannot be read")
        return dict(common, kpis=[], loss=empty, lr=empty, throughput=empty,
                    error=dbc.Alert(str(exc), color="danger", class_name="py-2 mb-2"),
                    state={"run": run.key, "forge_sig": sig})
    train = log.train
    ck_key = [f"{c.name}:{c.size}" for c in cks]
    notes = f" ({'; '.join(log.notes)})" if log.notes else ""
    error = dbc.Alert([html.Strong(f"{run.label}: "), f"{run.path}. ",
                       f"log.csv columns {','.join(log.columns)}; {len(train):,} steps{notes}. Loss is in "
                       "nats per token, so the chart shows bits per token, not per byte."],
                      color="secondary", class_name="py-2 mb-2 small")
    # rows appended (and the same checkpoints): the charts are extended, not redrawn
    extended = (_extend_charts(log, state, smoothing)
                if same_view and state.get("forge_cks") == ck_key else None)
    if extended is not None:
        loss, lr, throughput, chart = extended
        return dict(common, kpis=kpis(train), loss=loss, lr=lr, throughput=throughput,
                    error=error, state={**chart, "forge_sig": sig})
    val = log.val
    line, carry = smooth_continue((train["loss"] / LN2).to_numpy(dtype=float), smoothing)
    return dict(common, kpis=kpis(train), loss=loss_figure(log, smoothing, log_y, cks, line),
                lr=lr_grad_fig(train[["step", "lr", "grad_norm"]], max_points=MAX_POINTS, lr_label="lr"),
                throughput=throughput_fig(train[["step", "tokens_per_sec"]], max_points=MAX_POINTS),
                error=error,
                state={"run": run.key, "forge_sig": sig, **smoothing.as_state(), "log_y": log_y,
                       "gen": f"forge-{sig}", "forge_cks": ck_key,
                       "last_step": int(train["step"].iloc[-1]) if len(train) else None,
                       "points": min(len(train), MAX_POINTS),
                       "rows": len(train), "resumes": log.resumes, "val_rows": len(val),
                       "last_val_step": int(val["step"].iloc[-1]) if len(val) else None,
                       "smooth": carry})
