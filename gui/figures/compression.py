"""Compression and Evaluation tabs: bits per byte of a compression job against the classical
compressors, and evaluation bpb over checkpoints with the published reference lines."""
from __future__ import annotations

from collections.abc import Collection

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.colors import qualitative

from umoec import units

from .base import MARGIN, TEMPLATE, empty_fig

# Published enwik8 figures the spec compares against (bits per byte).
REFERENCE_BPB = {"gzip": 2.7, "zstd-22": 1.95, "CMIX": 1.23}
OURS_COLOUR = "#0d6efd"
BASELINE_COLOURS = {"gzip -9": "#6c757d", "zstd -19": "#adb5bd", "zstd -22": "#fd7e14",
                    "xz -9e": "#20c997", "brotli -11": "#6f42c1"}


def compression_comparison_fig(methods: pd.DataFrame, title: str = "") -> go.Figure:
    """Bits per byte of the neural compressor (the first row of `methods`: method, raw_bytes,
    packed_bytes, seconds) and the classical ones on the same file, sizes and speed in the hover."""
    if methods.empty:
        return empty_fig("No finished compression job yet: compress a file to compare it with "
                         "gzip, zstd, xz and brotli", height=260)
    d = methods.copy()
    raw = d["raw_bytes"].astype(float)
    d["bpb"] = np.where(raw > 0, units.bpb(d["packed_bytes"].astype(float), raw.where(raw > 0, 1)), 0.0)
    secs = d["seconds"].astype(float)
    d["speed"] = np.where(secs > 0, raw / secs.where(secs > 0, 1), 0.0)
    colours = [OURS_COLOUR if i == 0 else BASELINE_COLOURS.get(m, "#6c757d")
               for i, m in enumerate(d["method"])]
    fig = go.Figure(go.Bar(
        x=d["bpb"], y=d["method"], orientation="h", marker_color=colours,
        text=[f"{b:.3f} bpb" for b in d["bpb"]], textposition="auto",
        customdata=np.stack([d["packed_bytes"], d["raw_bytes"], d["speed"]], axis=-1),
        hovertemplate="%{y}: %{x:.3f} bpb<br>%{customdata[0]:,} of %{customdata[1]:,} bytes"
                      "<br>%{customdata[2]:,.0f} B/s<extra></extra>"))
    fig.update_layout(template=TEMPLATE, height=90 + 38 * len(d),
                      margin={"l": 100, "r": 20, "t": 40 if title else 20, "b": 45},
                      xaxis_title="bits per byte (lower is better)",
                      yaxis={"autorange": "reversed"}, showlegend=False,
                      title={"text": title, "font": {"size": 13}, "x": 0.01} if title else None)
    return fig


def eval_bpb_history_fig(evals: pd.DataFrame, baselines: pd.DataFrame | None = None,
                         simulated: bool = False, real: Collection[str] = ()) -> go.Figure:
    """Evaluation bpb over checkpoints, one line per dataset (eval_results), failed round trips
    as a red x, the measured compressors of the newest dataset dotted (eval_baselines) and the
    published enwik8 figures dashed. `simulated` marks the lines "(simulated)", except the
    datasets in `real` (a coding model evaluated on a simulated run)."""
    if evals.empty:
        return empty_fig("No evaluation yet: press Run enwik8 Eval", height=360)
    fig = go.Figure()
    d = evals.sort_values("step")
    for i, (dataset, g) in enumerate(d.groupby("dataset", sort=False)):
        name = f"{dataset} (simulated)" if simulated and dataset not in real else str(dataset)
        fig.add_trace(go.Scatter(x=g["step"], y=g["bpb"], mode="lines+markers", name=name,
                                 line={"color": qualitative.Plotly[i % 10], "width": 2},
                                 hovertemplate="step %{x:,}<br>%{y:.4f} bpb<extra>"
                                               + str(dataset) + "</extra>"))
    bad = d[d["roundtrip_ok"].fillna(0).astype(int) == 0]
    if not bad.empty:
        fig.add_trace(go.Scatter(x=bad["step"], y=bad["bpb"], mode="markers", name="roundtrip FAIL",
                                 marker={"symbol": "x", "size": 12, "color": "#dc3545"}))
    if baselines is not None and not baselines.empty:
        newest = str(d.sort_values(["step", "ts"] if "ts" in d else ["step"])["dataset"].iloc[-1])
        b = baselines[baselines["dataset"] == newest].sort_values("step")
        for method, g in b.groupby("method", sort=False):
            bpb = units.bpb(g["compressed_bytes"].astype(float), g["original_bytes"].clip(lower=1))
            fig.add_trace(go.Scatter(x=g["step"], y=bpb, mode="lines+markers",
                                     name=f"{method} (measured)",
                                     line={"dash": "dot", "width": 1,
                                           "color": BASELINE_COLOURS.get(method, "#6c757d")},
                                     marker={"size": 5}))
    for label, value in REFERENCE_BPB.items():
        fig.add_hline(y=value, line={"dash": "dash", "width": 1, "color": "#6c757d"},
                      annotation_text=f"{label} {value} (enwik8)", annotation_position="top left",
                      annotation_font={"size": 10, "color": "#6c757d"})
    fig.update_layout(template=TEMPLATE, height=380, margin=MARGIN, xaxis_title="step",
                      yaxis_title="bits per byte", hovermode="closest", showlegend=True,
                      legend={"orientation": "h", "y": -0.2}, uirevision="eval-history")
    return fig
