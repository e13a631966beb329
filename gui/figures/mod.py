"""MoD tab: the numbers of its metric cards, the fraction of bytes each MoD block processes now
(training and inference) and over training, against the target capacity."""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from .base import MARGIN, REFERENCE_LINE, TEMPLATE, block_colour, block_label, empty_fig, line_trace
from .series import thin


def mod_summary(at: pd.DataFrame, history: pd.DataFrame | None = None) -> dict:
    """The MoD cards' numbers from the newest step (`at`) and the history: average fraction, signed
    and worst deviation from capacity, inference-time fraction (None if not logged), run average."""
    if at.empty:
        return {}
    frac, cap = at["fraction_processed"].astype(float), at["capacity"].astype(float)
    inf = pd.to_numeric(at["fraction_inference"], errors="coerce")
    out = {"step": int(at["step"].iloc[0]), "blocks": len(at), "average": float(frac.mean()),
           "capacity": float(cap.mean()), "deviation": float((frac - cap).mean()),
           "worst": float((frac - cap).abs().max()),
           "inference": None if inf.isna().all() else float(inf.mean())}
    if history is not None and not history.empty:
        out["run_average"] = float(history["fraction_processed"].astype(float).mean())
    return out


def mod_current_fig(at: pd.DataFrame) -> go.Figure:
    """Fraction each MoD block processes at the newest step (training, inference) vs the capacity."""
    if at.empty:
        return empty_fig("No MoD rows yet", height=380)
    colours = [block_colour(b) for b in at["block_idx"]]
    bars = {"x": [block_label(b) for b in at["block_idx"]], "texttemplate": "%{text:.1%}",
            "textposition": "inside", "insidetextanchor": "end"}
    fig = go.Figure(go.Bar(y=at["fraction_processed"], name="training (top-k)", marker_color=colours,
                           text=at["fraction_processed"], **bars))
    inf = pd.to_numeric(at["fraction_inference"], errors="coerce")
    if not inf.isna().all():
        fig.add_trace(go.Bar(y=inf, name="inference (threshold router)", text=inf,
                             marker={"color": colours, "pattern": {"shape": "/"}, "opacity": 0.55},
                             textfont={"color": "#212529"}, **bars))
    cap = float(at["capacity"].iloc[0])
    fig.add_hline(y=cap, line=REFERENCE_LINE, annotation_text=f"capacity {cap:.0%}",
                  annotation_position="top right", annotation_yshift=4)
    fig.update_layout(template=TEMPLATE, height=380, margin=MARGIN, barmode="group",
                      yaxis={"title": "fraction processed", "tickformat": ".0%",
                             "range": [0, max(1.0, float(at["fraction_processed"].max()) + 0.1)]},
                      title={"text": f"step {int(at['step'].iloc[0]):,}", "font": {"size": 13},
                             "x": 0.01},
                      legend={"orientation": "h", "y": -0.2}, uirevision="mod-current")
    return fig


def mod_gate_history_fig(history: pd.DataFrame) -> go.Figure:
    """Fraction processed per MoD block over training (solid; inference dotted; capacity dashed)."""
    if history.empty:
        return empty_fig("No MoD history yet")
    fig = go.Figure()
    for b, d in history.groupby("block_idx", sort=True):
        steps = d["step"].to_numpy()
        frac = d["fraction_processed"].to_numpy(dtype=float)
        inf = pd.to_numeric(d["fraction_inference"], errors="coerce").to_numpy(dtype=float)
        has_inf = not np.isnan(inf).all()
        keep = thin(steps, [frac, np.nan_to_num(inf)] if has_inf else [frac])
        fig.add_trace(line_trace(x=steps[keep], y=frac[keep], mode="lines", legendgroup=str(b),
                                name=f"{block_label(b)} training",
                                line={"color": block_colour(b), "width": 2}))
        if has_inf:
            fig.add_trace(line_trace(x=steps[keep], y=inf[keep], mode="lines", legendgroup=str(b),
                                    name=f"{block_label(b)} inference",
                                    line={"color": block_colour(b), "width": 1.5, "dash": "dot"}))
    cap = history.groupby("step", sort=True)["capacity"].first()
    cap_steps, cap_vals = cap.index.to_numpy(), cap.to_numpy(dtype=float)
    if np.allclose(cap_vals, cap_vals[0]):  # constant capacity: two points are enough
        cap_steps, cap_vals = cap_steps[[0, -1]], cap_vals[[0, -1]]
    fig.add_trace(go.Scatter(x=cap_steps, y=cap_vals, mode="lines", name="target capacity",
                             line=REFERENCE_LINE, hoverinfo="skip"))
    fig.update_layout(template=TEMPLATE, height=380, margin=MARGIN, xaxis_title="step",
                      yaxis={"title": "fraction processed", "tickformat": ".0%"},
                      legend={"orientation": "h", "y": -0.22}, hovermode="x",
                      uirevision="mod-history")
    return fig
