"""Training charts: loss (raw, smoothed, validation, best, checkpoint markers), learning rate and
gradient norm, throughput (tokens/s), and the Config tab's preview of the learning-rate schedule."""
from __future__ import annotations

import time

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from umoec.units import fmt_bytes

from .base import TEMPLATE, crosshair, empty_fig, line_trace
from .series import Smoothing, downsample, smooth

# Trace order of the live training charts: callbacks extend these by index (dash.Patch).
LOSS_TRACES = ("train", "smoothed", "val", "best", "checkpoints")
CHECKPOINT_TRACE = LOSS_TRACES.index("checkpoints")
CHECKPOINT_COLUMNS = ("step", "file", "size", "mtime")   # loss_fig's checkpoints, one row each


def _line(steps: np.ndarray, y: np.ndarray, max_points: int | None, **trace):
    """A line of (steps, y) downsampled to about `max_points` (series.downsample)."""
    i = downsample(steps, y, max_points)
    return line_trace(x=steps[i].tolist(), y=y[i].tolist(), mode="lines", **trace)


def _style(fig: go.Figure, height: int, left: int = 60, right: int = 60, **layout) -> go.Figure:
    """The training charts' shared look: step on x, the crosshair."""
    fig.update_layout(template=TEMPLATE, height=height, xaxis_title="step",
                      margin={"l": left, "r": right, "t": 30, "b": 40}, **layout)
    return crosshair(fig)


def best_val_name(bpb: float) -> str:
    return f"best val {bpb:.3f}"


def checkpoint_points(checkpoints) -> dict:
    """The checkpoint trace's x, y, text (hover) and customdata (file name: what a click
    selects), one point per row of `checkpoints` (CHECKPOINT_COLUMNS: a frame, or tuples); y is
    the middle of the marker lane. Live updates assign these to the trace whole."""
    rows = pd.DataFrame(checkpoints, columns=list(CHECKPOINT_COLUMNS)).to_dict("records")
    return {"x": [int(r["step"]) for r in rows], "y": [0.5] * len(rows),
            "customdata": [str(r["file"]) for r in rows],
            "text": [f"{r['file']}: step {int(r['step']):,}, {fmt_bytes(float(r['size']))}, "
                     f"{time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(float(r['mtime'])))}"
                     for r in rows]}


def _checkpoint_lane(fig: go.Figure, checkpoints) -> None:
    """Checkpoint markers in a thin lane of their own under the curves (y2), so they never hide
    a curve and stay put under any zoom or log y; the x axis is drawn under the lane."""
    fig.add_trace(go.Scatter(**checkpoint_points(checkpoints), name="checkpoints", mode="markers",
                             yaxis="y2", hovertemplate="%{text}<extra></extra>", showlegend=False,
                             marker={"symbol": "triangle-up", "size": 11, "color": "#6c757d",
                                     "line": {"color": "#fff", "width": 1}}))
    fig.update_layout(yaxis={"domain": [0.1, 1.0]},
                      yaxis2={"domain": [0.0, 0.07], "range": [0, 1], "fixedrange": True,
                              "showticklabels": False, "showgrid": False, "zeroline": False,
                              "title": None},
                      xaxis={"anchor": "y2"})


def loss_fig(train: pd.DataFrame, val: pd.DataFrame, smoothing: Smoothing = Smoothing(),
             log_y: bool = False, max_points: int | None = None,
             checkpoints=None, smoothed: np.ndarray | None = None) -> go.Figure:
    """Training bpb (raw, and smoothed on every row as `smoothing` says, or `smoothed` where the
    caller has that line already; the raw trace never clipped) and validation bpb against step,
    best val marked; with `checkpoints`
    (CHECKPOINT_COLUMNS rows), a clickable marker per checkpoint in a lane under the curves.
    With `max_points` each trace is downsampled (peaks kept). Traces are always LOSS_TRACES in
    that order (val and best empty until the first evaluation), so live updates can extend them."""
    if train.empty:
        return empty_fig("No training metrics yet: the first row appears after "
                         "logging.log_every steps")
    steps = train["step"].to_numpy()
    bpb = train["bpb"].to_numpy(dtype=float)
    fig = go.Figure([_line(steps, bpb, max_points, name="train bpb",
                           line={"color": "rgba(13,110,253,0.30)", "width": 1}),
                     _line(steps, smooth(bpb, smoothing) if smoothed is None else smoothed,
                           max_points,
                           name=f"train bpb ({smoothing.label()})",
                           line={"color": "#0d6efd", "width": 2})])
    fig.add_trace(go.Scatter(x=val["step"].tolist(), y=val["bpb"].astype(float).tolist(),
                             name="val bpb", mode="lines+markers",
                             line={"color": "#d63384", "width": 2}))
    if val.empty:
        best_x, best_y, best_name = [], [], "best val"
    else:
        best = val.loc[val["bpb"].idxmin()]
        best_x, best_y = [int(best["step"])], [float(best["bpb"])]
        best_name = best_val_name(best["bpb"])
    fig.add_trace(go.Scatter(x=best_x, y=best_y, mode="markers", name=best_name,
                             marker={"symbol": "star", "size": 14, "color": "#ffc107",
                                     "line": {"color": "#000", "width": 1}}))
    _style(fig, 360, 50, 20, yaxis_title="bits per byte", legend={"orientation": "h", "y": -0.3},
           uirevision="loss")
    if log_y:
        fig.update_layout(yaxis_type="log")
    if checkpoints is not None:
        _checkpoint_lane(fig, checkpoints)
    return fig


def lr_grad_fig(train: pd.DataFrame, max_points: int | None = None,
                lr_label: str = "lr (AdamW)", grad_clip: float | None = None) -> go.Figure:
    """Learning rate and gradient norm against step (two y axes), downsampled to about
    `max_points`; `lr_label` names the lr (a Forge run's optimizer is not ours); `grad_clip` (> 0)
    is drawn as a dashed line on the grad-norm axis, so clipped steps show reaching it."""
    if train.empty:
        return empty_fig("No training metrics yet", height=260)
    steps = train["step"].to_numpy()
    fig = go.Figure([_line(steps, train["lr"].to_numpy(dtype=float), max_points, name=lr_label,
                           line={"color": "#198754"}),
                     _line(steps, train["grad_norm"].to_numpy(dtype=float), max_points,
                           name="grad norm", yaxis="y2", line={"color": "#fd7e14", "width": 1})])
    _style(fig, 260, yaxis={"title": "lr", "exponentformat": "e"},
           yaxis2={"title": "grad norm", "overlaying": "y", "side": "right"},
           legend={"orientation": "h", "y": -0.3}, uirevision="lr")
    if grad_clip:
        fig.add_shape(type="line", xref="paper", x0=0, x1=1, yref="y2", y0=grad_clip,
                      y1=grad_clip, line={"color": "#fd7e14", "width": 1, "dash": "dash"})
        fig.add_annotation(xref="paper", x=1, xanchor="right", yref="y2", y=grad_clip,
                           yanchor="bottom", showarrow=False, text=f"grad clip {grad_clip:g}",
                           font={"size": 10, "color": "#fd7e14"})
    return fig


def throughput_fig(train: pd.DataFrame, max_points: int | None = None) -> go.Figure:
    """Training throughput (`tokens_per_sec`) against step, downsampled to about `max_points`."""
    if train.empty:
        return empty_fig("No throughput yet: the first row appears after logging.log_every steps",
                         height=260)
    fig = go.Figure(_line(train["step"].to_numpy(), train["tokens_per_sec"].to_numpy(dtype=float),
                          max_points, name="tokens/s", line={"color": "#20c997", "width": 1.5}))
    return _style(fig, 260, right=20, yaxis={"title": "tokens/s", "rangemode": "tozero"},
                  showlegend=False, uirevision="throughput")


def lr_preview_fig(steps, adamw, muon, warmup_steps: int, height: int = 190) -> go.Figure:
    """The learning-rate schedule a config will run (umoec.schedule.lr_curve), both optimizers
    (AdamW left axis, Muon right axis), the end of warmup marked."""
    if len(steps) == 0:
        return empty_fig("Fix the highlighted fields to preview the schedule", height=height)
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=steps, y=adamw, name="AdamW", mode="lines",
                             line={"color": "#198754", "width": 2}))
    fig.add_trace(go.Scatter(x=steps, y=muon, name="Muon", mode="lines", yaxis="y2",
                             line={"color": "#6f42c1", "width": 2, "dash": "dot"}))
    if 0 < warmup_steps < steps[-1]:
        fig.add_vline(x=warmup_steps, line={"color": "#adb5bd", "width": 1, "dash": "dash"})
    fig.update_layout(template=TEMPLATE, height=height,
                      margin={"l": 45, "r": 45, "t": 10, "b": 30},
                      xaxis={"title": None}, showlegend=True,
                      legend={"orientation": "h", "y": 1.15, "x": 0, "font": {"size": 10}},
                      yaxis={"exponentformat": "e", "tickfont": {"size": 9}},
                      yaxis2={"overlaying": "y", "side": "right", "exponentformat": "e",
                              "tickfont": {"size": 9}, "showgrid": False})
    return fig


def system_fig(system: pd.DataFrame, max_points: int | None = None) -> go.Figure:
    """CPU use (% of one core) and resident memory (MB) against step, GPU use and memory when
    measured; the newest free disk space in the title. Empty with a reason before any sample."""
    if system.empty:
        return empty_fig("No system samples: they are logged with each step by runs started "
                         "with this version", height=240)
    steps = system["step"].to_numpy()
    fig = go.Figure()

    def line(column: str, name: str, colour: str, scale: float = 1.0, axis: str = "y"):
        y = system[column].to_numpy(dtype=float) / scale
        if np.isnan(y).all():
            return
        i = downsample(steps, np.nan_to_num(y, nan=0.0), max_points)
        fig.add_trace(line_trace(x=steps[i].tolist(), y=y[i].tolist(), name=name, mode="lines",
                                yaxis=axis, line={"color": colour, "width": 1.5}))

    line("cpu_percent", "CPU % (of one core)", "#0d6efd")
    line("gpu_util", "GPU %", "#6f42c1")
    line("rss_bytes", "memory (MB, resident)", "#198754", 1e6, "y2")
    line("gpu_mem_bytes", "GPU memory (MB)", "#d63384", 1e6, "y2")
    disk = system["disk_free_bytes"].dropna()
    title = f"disk free {fmt_bytes(float(disk.iloc[-1]))}" if len(disk) else None
    return _style(fig, 240, title={"text": title, "font": {"size": 12}, "x": 0.01} if title else None,
                  yaxis={"title": "%", "rangemode": "tozero"},
                  yaxis2={"title": "MB", "overlaying": "y", "side": "right", "rangemode": "tozero",
                          "showgrid": False},
                  legend={"orientation": "h", "y": -0.35})
