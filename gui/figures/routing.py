"""Routing tab figures, from DataFrames as umoec/metrics/read.py returns them: expert load per
block at one step (heatmap), each expert's load or bias over time, load balance per block (Gini,
max/min; umoec/metrics/balance.py) and one expert's drill-down."""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from umoec.metrics.balance import load_balance_table

from .base import (
    MARGIN,
    REFERENCE_LINE,
    TEMPLATE,
    block_colour,
    block_label,
    empty_fig,
    expert_colour,
    line_trace,
)
from .series import thin


def _reference(x, y: float, name: str, **kw) -> go.Scatter:
    """A dashed horizontal line at `y` over the first and last of `x` (balanced load, bias 0)."""
    return go.Scatter(x=[x[0], x[-1]], y=[y, y], mode="lines", name=name, line=REFERENCE_LINE,
                      hoverinfo="skip", **kw)


def routing_heatmap_fig(routing_at: pd.DataFrame, highlight: tuple[int, int] | None = None) -> go.Figure:
    """Expert load at one step: blocks (rows, y) x experts (columns, x), white = balanced (1/n), so a
    click's point names the cell; `highlight` = (block_idx, expert_idx) outlines that cell."""
    if routing_at.empty:
        return empty_fig("No routing rows at this step")
    grid = routing_at.pivot_table(index="block_idx", columns="expert_idx", values="load", aggfunc="first")
    blocks, experts = [int(b) for b in grid.index], [int(e) for e in grid.columns]
    balanced = 1.0 / len(experts)
    z = grid.to_numpy(dtype=float)
    custom = [[[b, e] for e in experts] for b in blocks]  # [block, expert] per cell
    step = int(routing_at["step"].iloc[0])
    spread = max(float(np.nanmax(np.abs(z - balanced))), 0.25 * balanced)
    fig = go.Figure(go.Heatmap(
        z=z, x=experts, y=blocks, customdata=custom,
        colorscale="RdBu_r", zmid=balanced, zmin=max(0.0, balanced - spread), zmax=balanced + spread,
        text=z, texttemplate="%{z:.1%}" if z.size <= 400 else None, textfont={"size": 10},
        xgap=2, ygap=2, colorbar={"title": {"text": "load"}, "tickformat": ".0%"},
        hovertemplate="block %{y}, expert %{x}<br>load %{z:.2%} (balanced " + f"{balanced:.2%})"
                      "<extra></extra>"))
    if highlight is not None and highlight[0] in blocks and highlight[1] in experts:
        row, col = blocks.index(highlight[0]), highlight[1]
        fig.add_shape(type="rect", x0=col - 0.5, x1=col + 0.5, y0=row - 0.5, y1=row + 0.5,
                      line={"color": "#212529", "width": 3})
    fig.update_layout(template=TEMPLATE, height=max(220, 90 + 46 * len(blocks)), margin=MARGIN,
                      xaxis={"title": "expert", "dtick": 1, "showgrid": False},
                      yaxis={"type": "category", "autorange": "reversed", "showgrid": False,
                             "tickvals": blocks, "ticktext": [block_label(b) for b in blocks]},
                      title={"text": f"step {step:,}", "font": {"size": 13}, "x": 0.01},
                      uirevision="routing-heatmap")
    return fig


def moe_routing_history_fig(history: pd.DataFrame, block_idx: int | None = None,
                            value: str = "load", highlight: int | None = None) -> go.Figure:
    """Load (or bias) of every expert of one MoE block (None: the lowest) over time, a dashed line at
    the balanced load 1/n (bias: 0); `highlight` draws that expert thicker and the others faded."""
    if history.empty:
        return empty_fig("No routing history yet")
    if block_idx is None or block_idx not in set(history["block_idx"]):
        block_idx = int(history["block_idx"].min())
    d = history[history["block_idx"] == block_idx]
    wide = d.pivot_table(index="step", columns="expert_idx", values=value, aggfunc="first").sort_index()
    steps = wide.index.to_numpy()
    keep = thin(steps, [wide[c].to_numpy() for c in wide.columns])
    fig = go.Figure()
    for e in wide.columns:
        faded = highlight is not None and int(e) != highlight
        fig.add_trace(line_trace(
            x=steps[keep], y=wide[e].to_numpy()[keep], mode="lines", name=f"expert {int(e)}",
            line={"color": expert_colour(e), "width": 3 if int(e) == highlight else 1.5},
            opacity=0.35 if faded else 1.0))
    n = len(wide.columns)
    ref, ref_name = (1.0 / n, f"balanced 1/{n}") if value == "load" else (0.0, "bias 0")
    fig.add_trace(_reference(steps, ref, ref_name))
    fig.update_layout(template=TEMPLATE, height=380, margin=MARGIN, xaxis_title="step",
                      yaxis={"title": f"{value} ({block_label(block_idx)})",
                             "tickformat": ".0%" if value == "load" else None},
                      legend={"orientation": "h", "y": -0.22, "font": {"size": 11}},
                      hovermode="x", uirevision=f"routing-history-{block_idx}-{value}")
    return fig


def load_balance_fig(history: pd.DataFrame) -> go.Figure:
    """Gini coefficient (left) and max/min load ratio (right, log) per MoE block over time, dashed
    at perfect balance; from the routing history or an already computed `load_balance_table`."""
    if history.empty:
        return empty_fig("No routing history yet")
    table = history if "gini" in history.columns else load_balance_table(history)
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.1,
                        subplot_titles=("Gini coefficient (0 = balanced)",
                                        "max / min expert load (1 = balanced, log scale)"))
    for b, d in table.groupby("block_idx", sort=True):
        steps = d["step"].to_numpy()
        keep = thin(steps, [d["gini"].to_numpy(), d["max_min"].to_numpy()])
        for col, column in ((1, "gini"), (2, "max_min")):
            fig.add_trace(line_trace(x=steps[keep], y=d[column].to_numpy()[keep], mode="lines",
                                     name=block_label(b), legendgroup=str(b), showlegend=col == 1,
                                     line={"color": block_colour(b), "width": 1.8}), row=1, col=col)
    ends = [table["step"].min(), table["step"].max()]
    for col, ref in ((1, 0.0), (2, 1.0)):
        fig.add_trace(_reference(ends, ref, "balanced", showlegend=col == 1), row=1, col=col)
    fig.update_yaxes(title_text="Gini", rangemode="tozero", row=1, col=1)
    fig.update_yaxes(title_text="max/min", type="log", dtick=1, row=1, col=2)
    fig.update_xaxes(title_text="step")
    fig.update_annotations(font_size=12)
    fig.update_layout(template=TEMPLATE, height=360, margin={"l": 60, "r": 20, "t": 40, "b": 40},
                      legend={"orientation": "h", "y": -0.25}, hovermode="x",
                      uirevision="load-balance")
    return fig


def expert_detail_fig(expert: pd.DataFrame, block_idx: int, expert_idx: int,
                      n_experts: int | None = None) -> go.Figure:
    """One expert's load (left axis) and balancing bias (right axis) over time (the drill-down)."""
    if expert.empty:
        return empty_fig(f"No rows for block {block_idx}, expert {expert_idx}", height=340)
    steps = expert["step"].to_numpy()
    keep = thin(steps, [expert["load"].to_numpy(), expert["bias"].to_numpy()])
    fig = go.Figure()
    fig.add_trace(line_trace(x=steps[keep], y=expert["load"].to_numpy()[keep], mode="lines",
                            name="load", line={"color": expert_colour(expert_idx), "width": 2}))
    fig.add_trace(line_trace(x=steps[keep], y=expert["bias"].to_numpy()[keep], mode="lines",
                            name="bias", yaxis="y2", line={"color": "#495057", "width": 2,
                                                           "dash": "dot"}))
    if n_experts:
        fig.add_trace(_reference(steps, 1.0 / n_experts, f"balanced 1/{n_experts}"))
    fig.update_layout(template=TEMPLATE, height=340, margin={"l": 60, "r": 70, "t": 40, "b": 40},
                      title={"text": f"{block_label(block_idx)}, expert {expert_idx}",
                             "font": {"size": 13}, "x": 0.01},
                      xaxis_title="step", yaxis={"title": "load", "tickformat": ".0%"},
                      yaxis2={"title": "bias", "overlaying": "y", "side": "right", "showgrid": False,
                              "tickmode": "auto", "nticks": 6},
                      legend={"orientation": "h", "y": -0.25}, hovermode="x",
                      uirevision=f"expert-{block_idx}-{expert_idx}")
    return fig
