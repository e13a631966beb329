"""Activations and Brain tabs: per-block activation distributions (boxes from logged
percentiles), a blocks x statistics heatmap, and hidden states on their first two principal
components."""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .base import MARGIN, TEMPLATE, block_colour, block_label, empty_fig

ACTIVATION_STATS = ["mean", "std", "p1", "p25", "p50", "p75", "p99"]
PCA_HOVER = "sample %{customdata}<br>pc1 %{x:.3f}<br>pc2 %{y:.3f}<extra></extra>"


def activation_dist_fig(stats: pd.DataFrame) -> go.Figure:
    """Per-block activation distribution as boxes drawn from the logged percentiles:
    whiskers p1..p99, box p25..p75, line at p50, dashed mean with +-1 std."""
    if stats.empty:
        return empty_fig("No activation statistics yet")
    fig = go.Figure([go.Box(
        x=[block_label(r["block_idx"])], q1=[r["p25"]], median=[r["p50"]], q3=[r["p75"]],
        lowerfence=[r["p1"]], upperfence=[r["p99"]], mean=[r["mean"]], sd=[r["std"]], boxmean="sd",
        name=block_label(r["block_idx"]), marker_color=block_colour(r["block_idx"]), showlegend=False,
        hoverinfo="y+name") for _, r in stats.sort_values("block_idx").iterrows()])
    fig.update_layout(template=TEMPLATE, height=380, margin=MARGIN,
                      yaxis_title="per-byte RMS of the block's output",
                      title={"text": f"step {int(stats['step'].iloc[0]):,}: whiskers p1..p99, "
                                     "box p25..p75, dashed mean +- std",
                             "font": {"size": 13}, "x": 0.01},
                      uirevision="activation-dist")
    return fig


def activation_heatmap_fig(stats: pd.DataFrame) -> go.Figure:
    """Blocks (rows) x statistics (columns). Colour compares blocks within each statistic
    (each column scaled to its own min..max); the cell text is the raw value."""
    if stats.empty:
        return empty_fig("No activation statistics yet")
    d = stats.sort_values("block_idx")
    raw = d[ACTIVATION_STATS].to_numpy(dtype=float)
    lo, hi = raw.min(axis=0), raw.max(axis=0)
    scaled = np.divide(raw - lo, hi - lo, out=np.full_like(raw, 0.5), where=hi > lo)
    fig = go.Figure(go.Heatmap(
        z=scaled, x=ACTIVATION_STATS, y=[block_label(b) for b in d["block_idx"]], customdata=raw,
        text=[[f"{v:.3f}" for v in row] for row in raw], texttemplate="%{text}",
        textfont={"size": 11}, colorscale="Blues", zmin=0, zmax=1, xgap=2, ygap=2,
        colorbar={"title": {"text": "within stat"}, "tickvals": [0, 1], "ticktext": ["low", "high"]},
        hovertemplate="%{y}, %{x} = %{text}<extra></extra>"))
    fig.update_layout(template=TEMPLATE, height=max(380, 90 + 40 * len(d)), margin=MARGIN,
                      yaxis={"autorange": "reversed"}, xaxis={"side": "top"},
                      uirevision="activation-heatmap")
    return fig


def pca_fig(hidden: pd.DataFrame, block_idx: int | None = None) -> go.Figure:
    """Hidden states on their first two principal components: one block (`block_idx`) with equal
    aspect (distances are honest), or None for every block as small multiples sharing axes."""
    if hidden.empty:
        return empty_fig("No hidden-state snapshot yet", height=520)
    step = int(hidden["step"].iloc[0])
    title = {"font": {"size": 13}, "x": 0.01}
    if block_idx is not None:
        d = hidden[hidden["block_idx"] == block_idx]
        if d.empty:
            return empty_fig(f"No hidden states for block {block_idx} at step {step:,}", height=520)
        fig = go.Figure(go.Scattergl(
            x=d["pc1"], y=d["pc2"], mode="markers", customdata=d["sample_idx"],
            marker={"color": block_colour(block_idx), "size": 7, "opacity": 0.65,
                    "line": {"color": "white", "width": 0.5}},
            hovertemplate=PCA_HOVER))
        fig.update_layout(template=TEMPLATE, height=520, margin=MARGIN, xaxis_title="PC 1",
                          yaxis={"title": "PC 2", "scaleanchor": "x", "scaleratio": 1},
                          title={**title, "text": f"{block_label(block_idx)} at step {step:,}: "
                                                  f"{len(d)} samples"},
                          uirevision=f"pca-{block_idx}")
        return fig
    blocks = sorted(int(b) for b in hidden["block_idx"].unique())
    cols = min(4, len(blocks))
    rows = -(-len(blocks) // cols)
    fig = make_subplots(rows=rows, cols=cols, shared_xaxes="all", shared_yaxes="all",
                        subplot_titles=[block_label(b) for b in blocks],
                        horizontal_spacing=0.03, vertical_spacing=0.08)
    for i, b in enumerate(blocks):
        d = hidden[hidden["block_idx"] == b]
        fig.add_trace(go.Scattergl(x=d["pc1"], y=d["pc2"], mode="markers", name=block_label(b),
                                   customdata=d["sample_idx"], showlegend=False,
                                   marker={"color": block_colour(b), "size": 5, "opacity": 0.6},
                                   hovertemplate=PCA_HOVER),
                      row=i // cols + 1, col=i % cols + 1)
    fig.update_annotations(font_size=12)
    fig.update_xaxes(title_text="PC 1", row=rows)
    fig.update_yaxes(title_text="PC 2", col=1)
    fig.update_layout(template=TEMPLATE, height=80 + 300 * rows,
                      margin={"l": 60, "r": 20, "t": 60, "b": 50},
                      title={**title, "text": f"all blocks at step {step:,} (shared axes)"},
                      uirevision="pca-all")
    return fig
