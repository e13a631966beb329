"""Figure builders: pure functions from DataFrames to Plotly figures (no I/O, no Dash)."""
from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

TEMPLATE = "plotly_white"


def empty_fig(message: str, height: int = 320) -> go.Figure:
    """A blank figure that says why it is blank (never an unexplained empty chart)."""
    fig = go.Figure()
    fig.add_annotation(text=message, showarrow=False, font={"size": 14, "color": "#6c757d"},
                       xref="paper", yref="paper", x=0.5, y=0.5)
    fig.update_layout(template=TEMPLATE, height=height, xaxis={"visible": False},
                      yaxis={"visible": False}, margin={"l": 20, "r": 20, "t": 20, "b": 20})
    return fig


def ema(values: pd.Series, alpha: float) -> pd.Series:
    """Debiased exponential moving average (as TensorBoard's smoothing), alpha in [0, 1)."""
    if alpha <= 0 or values.empty:
        return values.astype(float)
    smoothed = values.astype(float).ewm(alpha=1.0 - alpha, adjust=True).mean()
    return smoothed


def loss_fig(train: pd.DataFrame, val: pd.DataFrame, smoothing: float = 0.6,
             log_y: bool = False) -> go.Figure:
    """Training bpb (raw and EMA-smoothed) and validation bpb against step, best val marked."""
    if train.empty:
        return empty_fig("No training metrics yet: the first row appears after "
                         "logging.log_every steps")
    fig = go.Figure()
    fig.add_trace(go.Scattergl(x=train["step"], y=train["bpb"], name="train bpb", mode="lines",
                               line={"color": "rgba(13,110,253,0.30)", "width": 1}))
    fig.add_trace(go.Scattergl(x=train["step"], y=ema(train["bpb"], smoothing),
                               name=f"train bpb (EMA {smoothing:.2f})", mode="lines",
                               line={"color": "#0d6efd", "width": 2}))
    if not val.empty:
        fig.add_trace(go.Scatter(x=val["step"], y=val["bpb"], name="val bpb",
                                 mode="lines+markers", line={"color": "#d63384", "width": 2}))
        best = val.loc[val["bpb"].idxmin()]
        fig.add_trace(go.Scatter(x=[best["step"]], y=[best["bpb"]], mode="markers",
                                 name=f"best val {best['bpb']:.3f}",
                                 marker={"symbol": "star", "size": 14, "color": "#ffc107",
                                         "line": {"color": "#000", "width": 1}}))
    fig.update_layout(template=TEMPLATE, height=360, margin={"l": 50, "r": 20, "t": 30, "b": 40},
                      xaxis_title="step", yaxis_title="bits per byte",
                      legend={"orientation": "h", "y": -0.3},
                      uirevision="loss")
    if log_y:
        fig.update_yaxes(type="log")
    return fig


def lr_grad_fig(train: pd.DataFrame) -> go.Figure:
    """Learning rate and gradient norm against step (two y axes)."""
    if train.empty:
        return empty_fig("No training metrics yet", height=260)
    fig = go.Figure()
    fig.add_trace(go.Scattergl(x=train["step"], y=train["lr"], name="lr (AdamW)", mode="lines",
                               line={"color": "#198754"}))
    fig.add_trace(go.Scattergl(x=train["step"], y=train["grad_norm"], name="grad norm",
                               mode="lines", yaxis="y2", line={"color": "#fd7e14", "width": 1}))
    fig.update_layout(template=TEMPLATE, height=260, margin={"l": 60, "r": 60, "t": 30, "b": 40},
                      xaxis_title="step", yaxis={"title": "lr", "exponentformat": "e"},
                      yaxis2={"title": "grad norm", "overlaying": "y", "side": "right"},
                      legend={"orientation": "h", "y": -0.3}, uirevision="lr")
    return fig
