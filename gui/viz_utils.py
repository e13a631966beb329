"""Figure builders: pure functions from DataFrames to Plotly figures (no I/O, no Dash)."""
from __future__ import annotations

from collections.abc import Collection

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio
from plotly.colors import qualitative
from plotly.subplots import make_subplots

from umoec import units


def _template() -> str:
    """plotly_white with numbers people read: 55,380 rather than 5.538e+04 or 55.38k on axes
    and in hover labels."""
    t = go.layout.Template(pio.templates["plotly_white"])
    for axis in ("xaxis", "yaxis"):
        t.layout[axis].update(exponentformat="none", separatethousands=True)
    pio.templates["umoec"] = t
    return "umoec"


TEMPLATE = _template()


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


# Trace order of the live training charts: callbacks extend these by index (dash.Patch).
LOSS_TRACES = ("train", "ema", "val", "best")
LR_TRACES = ("lr", "grad_norm")


def best_val_name(bpb: float) -> str:
    return f"best val {bpb:.3f}"


def loss_fig(train: pd.DataFrame, val: pd.DataFrame, smoothing: float = 0.6,
             log_y: bool = False, max_points: int | None = None) -> go.Figure:
    """Training bpb (raw and EMA-smoothed) and validation bpb against step, best val marked.

    The EMA is computed on every row; with `max_points`, each long trace is then downsampled
    (MinMaxLTTB, peaks kept) to about that many points. Traces are always LOSS_TRACES, in that
    order (val and best empty until the first evaluation), so live updates can extend them.
    """
    if train.empty:
        return empty_fig("No training metrics yet: the first row appears after "
                         "logging.log_every steps")
    from .series import downsample
    from .series import ema as ema_np
    steps = train["step"].to_numpy()
    bpb = train["bpb"].to_numpy(dtype=float)
    smooth = ema_np(bpb, smoothing)
    raw_i, ema_i = downsample(steps, bpb, max_points), downsample(steps, smooth, max_points)
    fig = go.Figure()
    fig.add_trace(go.Scattergl(x=steps[raw_i].tolist(), y=bpb[raw_i].tolist(), name="train bpb", mode="lines",
                               line={"color": "rgba(13,110,253,0.30)", "width": 1}))
    fig.add_trace(go.Scattergl(x=steps[ema_i].tolist(), y=smooth[ema_i].tolist(),
                               name=f"train bpb (EMA {smoothing:.2f})", mode="lines",
                               line={"color": "#0d6efd", "width": 2}))
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
    fig.update_layout(template=TEMPLATE, height=360, margin={"l": 50, "r": 20, "t": 30, "b": 40},
                      xaxis_title="step", yaxis_title="bits per byte",
                      legend={"orientation": "h", "y": -0.3},
                      uirevision="loss")
    if log_y:
        fig.update_yaxes(type="log")
    return fig


def lr_grad_fig(train: pd.DataFrame, max_points: int | None = None,
                lr_label: str = "lr (AdamW)") -> go.Figure:
    """Learning rate and gradient norm against step (two y axes), each downsampled to about
    `max_points` when given. Traces: LR_TRACES. `lr_label`: what the lr trace is (a Forge
    run's optimizer is not ours)."""
    if train.empty:
        return empty_fig("No training metrics yet", height=260)
    from .series import downsample
    steps = train["step"].to_numpy()
    lr, gn = train["lr"].to_numpy(dtype=float), train["grad_norm"].to_numpy(dtype=float)
    lr_i, gn_i = downsample(steps, lr, max_points), downsample(steps, gn, max_points)
    fig = go.Figure()
    fig.add_trace(go.Scattergl(x=steps[lr_i].tolist(), y=lr[lr_i].tolist(), name=lr_label, mode="lines",
                               line={"color": "#198754"}))
    fig.add_trace(go.Scattergl(x=steps[gn_i].tolist(), y=gn[gn_i].tolist(), name="grad norm",
                               mode="lines", yaxis="y2", line={"color": "#fd7e14", "width": 1}))
    fig.update_layout(template=TEMPLATE, height=260, margin={"l": 60, "r": 60, "t": 30, "b": 40},
                      xaxis_title="step", yaxis={"title": "lr", "exponentformat": "e"},
                      yaxis2={"title": "grad norm", "overlaying": "y", "side": "right"},
                      legend={"orientation": "h", "y": -0.3}, uirevision="lr")
    return fig


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


# == analysis tabs: routing, MoD, activations, brain ===========================================
# Every function below is pure: DataFrames (columns as gui/db.py returns them) in, a figure out.

BLOCK_COLOURS = ["#0d6efd", "#d63384", "#198754", "#fd7e14", "#6f42c1", "#20c997", "#dc3545",
                 "#0dcaf0", "#6c757d", "#ffc107", "#6610f2", "#795548"]
EXPERT_COLOURS = [c for c in qualitative.Dark24 if c != "#222A2A"] + qualitative.Light24  # no black
REFERENCE_LINE = {"color": "#212529", "width": 1.5, "dash": "dash"}
MAX_POINTS_PER_LINE = 1500   # longer series are thinned with MinMaxLTTB before plotting
MIN_LOAD_FLOOR = 1e-4        # max/min ratio: an expert with (almost) no load counts as this
ACTIVATION_STATS = ["mean", "std", "p1", "p25", "p50", "p75", "p99"]
_MARGIN = {"l": 60, "r": 20, "t": 30, "b": 40}


def block_colour(block_idx: int) -> str:
    return BLOCK_COLOURS[int(block_idx) % len(BLOCK_COLOURS)]


def expert_colour(expert_idx: int) -> str:
    return EXPERT_COLOURS[int(expert_idx) % len(EXPERT_COLOURS)]


def gini(load, axis: int = -1):
    """Gini coefficient of expert loads: 0 = perfectly balanced, (n-1)/n = one expert takes all.

    G = sum_i (2i - n - 1) * c_(i) / (n * sum c), c sorted ascending, i = 1..n (TECHNIQUES.md
    section 2). The GUI spec's `1 - 2*sum(cumsum(sorted c)/sum c)/n` is exactly this minus 1/n
    (it gives -1/n for equal loads); this form is used because "balanced" reads as 0. Works on
    the last axis of any array; all-zero rows give 0.
    """
    c = np.sort(np.asarray(load, dtype=float), axis=axis)
    c = np.moveaxis(c, axis, -1)
    n = c.shape[-1]
    weights = 2.0 * np.arange(1, n + 1) - n - 1
    total = c.sum(axis=-1)
    num = (c * weights).sum(axis=-1)
    out = np.divide(num, n * total, out=np.zeros_like(total), where=total > 0)
    return float(out) if out.ndim == 0 else out


def max_min_ratio(load, axis: int = -1, floor: float = MIN_LOAD_FLOOR):
    """Largest over smallest expert load (1 = balanced); the smallest is floored at `floor`."""
    c = np.asarray(load, dtype=float)
    out = c.max(axis=axis) / np.maximum(c.min(axis=axis), floor)
    return float(out) if np.ndim(out) == 0 else out


def load_balance_table(routing: pd.DataFrame) -> pd.DataFrame:
    """Gini and max/min ratio of every (step, block) in a routing history (long format)."""
    cols = ["step", "block_idx", "gini", "max_min"]
    if routing.empty:
        return pd.DataFrame(columns=cols)
    d = routing.sort_values(["step", "block_idx", "expert_idx"])
    sizes = d.groupby(["step", "block_idx"], sort=True).size()
    out = sizes.index.to_frame(index=False)
    if sizes.nunique() == 1:  # the usual case: every block logs the same experts every step
        loads = d["load"].to_numpy(dtype=float).reshape(-1, int(sizes.iloc[0]))
        out["gini"], out["max_min"] = gini(loads), max_min_ratio(loads)
    else:
        groups = d.groupby(["step", "block_idx"], sort=True)["load"]
        out["gini"] = groups.apply(lambda s: gini(s.to_numpy())).to_numpy()
        out["max_min"] = groups.apply(lambda s: max_min_ratio(s.to_numpy())).to_numpy()
    return out[cols]


def thin(x, ys, n_out: int = MAX_POINTS_PER_LINE) -> np.ndarray:
    """Indices that keep the shape (peaks included) of every series in `ys` in ~n_out points.

    MinMaxLTTB (tsdownsample) per series, indices unioned; short series are returned whole.
    `x` must be ascending.
    """
    x = np.asarray(x)
    if len(x) <= n_out:
        return np.arange(len(x))
    from tsdownsample import MinMaxLTTBDownsampler
    ds = MinMaxLTTBDownsampler()
    xs = x.astype(np.float64)
    keep = [ds.downsample(xs, np.ascontiguousarray(np.asarray(y, dtype=np.float64)), n_out=n_out)
            for y in ys]
    return np.unique(np.concatenate(keep)).astype(np.int64)


def _block_label(block_idx) -> str:
    return f"block {int(block_idx)}"


def routing_heatmap_fig(routing_at: pd.DataFrame, highlight: tuple[int, int] | None = None) -> go.Figure:
    """Expert load at one step: blocks (rows) x experts (columns), white = balanced (1/n).

    x = expert index, y = block index (a category axis labelled "block N"), so a click's point
    names the cell directly; cells also carry [block_idx, expert_idx] as customdata.
    `highlight` = (block_idx, expert_idx) outlines that cell.
    """
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
    fig.update_layout(template=TEMPLATE, height=max(220, 90 + 46 * len(blocks)), margin=_MARGIN,
                      xaxis={"title": "expert", "dtick": 1, "showgrid": False},
                      yaxis={"type": "category", "autorange": "reversed", "showgrid": False,
                             "tickvals": blocks, "ticktext": [_block_label(b) for b in blocks]},
                      title={"text": f"step {step:,}", "font": {"size": 13}, "x": 0.01},
                      uirevision="routing-heatmap")
    return fig


def moe_routing_history_fig(history: pd.DataFrame, block_idx: int | None = None,
                            value: str = "load", highlight: int | None = None) -> go.Figure:
    """Load (or bias) of every expert of one MoE block over time, one line per expert.

    `block_idx` None = the lowest block present. A dashed line marks the balanced load 1/n
    (bias: 0). `highlight` draws that expert thicker and the others faded.
    """
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
        fig.add_trace(go.Scattergl(
            x=steps[keep], y=wide[e].to_numpy()[keep], mode="lines", name=f"expert {int(e)}",
            line={"color": expert_colour(e), "width": 3 if int(e) == highlight else 1.5},
            opacity=0.35 if faded else 1.0))
    n = len(wide.columns)
    ref, ref_name = (1.0 / n, f"balanced 1/{n}") if value == "load" else (0.0, "bias 0")
    fig.add_trace(go.Scatter(x=[steps[0], steps[-1]], y=[ref, ref], mode="lines", name=ref_name,
                             line=REFERENCE_LINE, hoverinfo="skip"))
    fig.update_layout(template=TEMPLATE, height=380, margin=_MARGIN, xaxis_title="step",
                      yaxis={"title": f"{value} ({_block_label(block_idx)})",
                             "tickformat": ".0%" if value == "load" else None},
                      legend={"orientation": "h", "y": -0.22, "font": {"size": 11}},
                      hovermode="x", uirevision=f"routing-history-{block_idx}-{value}")
    return fig


def load_balance_fig(history: pd.DataFrame) -> go.Figure:
    """Gini coefficient (left) and max/min load ratio (right, log) per MoE block over time.

    Dashed lines mark perfect balance (Gini 0, ratio 1). Accepts the routing history (long
    format) or an already computed `load_balance_table`.
    """
    if history.empty:
        return empty_fig("No routing history yet")
    table = history if "gini" in history.columns else load_balance_table(history)
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.1,
                        subplot_titles=("Gini coefficient (0 = balanced)",
                                        "max / min expert load (1 = balanced, log scale)"))
    for b, d in table.groupby("block_idx", sort=True):
        steps = d["step"].to_numpy()
        keep = thin(steps, [d["gini"].to_numpy(), d["max_min"].to_numpy()])
        colour = block_colour(b)
        fig.add_trace(go.Scattergl(x=steps[keep], y=d["gini"].to_numpy()[keep], mode="lines",
                                   name=_block_label(b), legendgroup=str(b),
                                   line={"color": colour, "width": 1.8}), row=1, col=1)
        fig.add_trace(go.Scattergl(x=steps[keep], y=d["max_min"].to_numpy()[keep], mode="lines",
                                   name=_block_label(b), legendgroup=str(b), showlegend=False,
                                   line={"color": colour, "width": 1.8}), row=1, col=2)
    first, last = table["step"].min(), table["step"].max()
    for col, ref in ((1, 0.0), (2, 1.0)):
        fig.add_trace(go.Scatter(x=[first, last], y=[ref, ref], mode="lines", name="balanced",
                                 line=REFERENCE_LINE, hoverinfo="skip", showlegend=col == 1),
                      row=1, col=col)
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
    fig.add_trace(go.Scattergl(x=steps[keep], y=expert["load"].to_numpy()[keep], mode="lines",
                               name="load", line={"color": expert_colour(expert_idx), "width": 2}))
    fig.add_trace(go.Scattergl(x=steps[keep], y=expert["bias"].to_numpy()[keep], mode="lines",
                               name="bias", yaxis="y2", line={"color": "#495057", "width": 2,
                                                              "dash": "dot"}))
    if n_experts:
        ref = 1.0 / n_experts
        fig.add_trace(go.Scatter(x=[steps[0], steps[-1]], y=[ref, ref], mode="lines",
                                 name=f"balanced 1/{n_experts}", line=REFERENCE_LINE,
                                 hoverinfo="skip"))
    fig.update_layout(template=TEMPLATE, height=340, margin={"l": 60, "r": 70, "t": 40, "b": 40},
                      title={"text": f"{_block_label(block_idx)}, expert {expert_idx}",
                             "font": {"size": 13}, "x": 0.01},
                      xaxis_title="step", yaxis={"title": "load", "tickformat": ".0%"},
                      yaxis2={"title": "bias", "overlaying": "y", "side": "right", "showgrid": False,
                              "tickmode": "auto", "nticks": 6},
                      legend={"orientation": "h", "y": -0.25}, hovermode="x",
                      uirevision=f"expert-{block_idx}-{expert_idx}")
    return fig


def mod_summary(at: pd.DataFrame, history: pd.DataFrame | None = None) -> dict:
    """Numbers for the MoD metric cards, from the newest step (`at`) and optionally the history.

    average: mean fraction processed over MoD blocks; deviation: that minus the capacity
    (signed, fraction points); worst: largest |fraction - capacity| of any block; inference:
    mean inference-time fraction (None if not logged); run_average: mean over the history.
    """
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
        out["run_deviation"] = float((history["fraction_processed"].astype(float)
                                      - history["capacity"].astype(float)).mean())
    return out


def mod_current_fig(at: pd.DataFrame) -> go.Figure:
    """Fraction of bytes each MoD block processes at the newest step (training and inference),
    with the target capacity as a dashed line."""
    if at.empty:
        return empty_fig("No MoD rows yet", height=380)
    labels = [_block_label(b) for b in at["block_idx"]]
    fig = go.Figure()
    fig.add_trace(go.Bar(x=labels, y=at["fraction_processed"], name="training (top-k)",
                         marker_color=[block_colour(b) for b in at["block_idx"]],
                         text=at["fraction_processed"], texttemplate="%{text:.1%}",
                         textposition="inside", insidetextanchor="end"))
    inf = pd.to_numeric(at["fraction_inference"], errors="coerce")
    if not inf.isna().all():
        fig.add_trace(go.Bar(x=labels, y=inf, name="inference (threshold router)",
                             marker={"color": [block_colour(b) for b in at["block_idx"]],
                                     "pattern": {"shape": "/"}, "opacity": 0.55},
                             text=inf, texttemplate="%{text:.1%}", textposition="inside",
                             insidetextanchor="end", textfont={"color": "#212529"}))
    cap = float(at["capacity"].iloc[0])
    fig.add_hline(y=cap, line=REFERENCE_LINE, annotation_text=f"capacity {cap:.0%}",
                  annotation_position="top right", annotation_yshift=4)
    fig.update_layout(template=TEMPLATE, height=380, margin=_MARGIN, barmode="group",
                      yaxis={"title": "fraction processed", "tickformat": ".0%",
                             "range": [0, max(1.0, float(at["fraction_processed"].max()) + 0.1)]},
                      title={"text": f"step {int(at['step'].iloc[0]):,}", "font": {"size": 13},
                             "x": 0.01},
                      legend={"orientation": "h", "y": -0.2}, uirevision="mod-current")
    return fig


def mod_gate_history_fig(history: pd.DataFrame) -> go.Figure:
    """fraction_processed per MoD block over training steps (solid), the inference-time fraction
    (dotted) and the target capacity (dashed)."""
    if history.empty:
        return empty_fig("No MoD history yet")
    fig = go.Figure()
    for b, d in history.groupby("block_idx", sort=True):
        steps = d["step"].to_numpy()
        frac = d["fraction_processed"].to_numpy(dtype=float)
        inf = pd.to_numeric(d["fraction_inference"], errors="coerce").to_numpy(dtype=float)
        has_inf = not np.isnan(inf).all()
        keep = thin(steps, [frac, np.nan_to_num(inf)] if has_inf else [frac])
        fig.add_trace(go.Scattergl(x=steps[keep], y=frac[keep], mode="lines", legendgroup=str(b),
                                   name=f"{_block_label(b)} training",
                                   line={"color": block_colour(b), "width": 2}))
        if has_inf:
            fig.add_trace(go.Scattergl(x=steps[keep], y=inf[keep], mode="lines", legendgroup=str(b),
                                       name=f"{_block_label(b)} inference",
                                       line={"color": block_colour(b), "width": 1.5, "dash": "dot"}))
    cap = history.groupby("step", sort=True)["capacity"].first()
    cap_steps, cap_vals = cap.index.to_numpy(), cap.to_numpy(dtype=float)
    if np.allclose(cap_vals, cap_vals[0]):  # constant capacity: two points are enough
        cap_steps, cap_vals = cap_steps[[0, -1]], cap_vals[[0, -1]]
    fig.add_trace(go.Scatter(x=cap_steps, y=cap_vals, mode="lines", name="target capacity",
                             line=REFERENCE_LINE, hoverinfo="skip"))
    fig.update_layout(template=TEMPLATE, height=380, margin=_MARGIN, xaxis_title="step",
                      yaxis={"title": "fraction processed", "tickformat": ".0%"},
                      legend={"orientation": "h", "y": -0.22}, hovermode="x",
                      uirevision="mod-history")
    return fig


def activation_dist_fig(stats: pd.DataFrame) -> go.Figure:
    """Per-block activation distribution as boxes drawn from the logged percentiles:
    whiskers p1..p99, box p25..p75, line at p50, dashed mean with +-1 std."""
    if stats.empty:
        return empty_fig("No activation statistics yet")
    fig = go.Figure()
    for _, r in stats.sort_values("block_idx").iterrows():
        b = int(r["block_idx"])
        fig.add_trace(go.Box(
            x=[_block_label(b)], q1=[r["p25"]], median=[r["p50"]], q3=[r["p75"]],
            lowerfence=[r["p1"]], upperfence=[r["p99"]], mean=[r["mean"]], sd=[r["std"]],
            boxmean="sd", name=_block_label(b), marker_color=block_colour(b), showlegend=False,
            hoverinfo="y+name"))
    fig.update_layout(template=TEMPLATE, height=380, margin=_MARGIN,
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
        z=scaled, x=ACTIVATION_STATS, y=[_block_label(b) for b in d["block_idx"]], customdata=raw,
        text=[[f"{v:.3f}" for v in row] for row in raw], texttemplate="%{text}",
        textfont={"size": 11}, colorscale="Blues",
        zmin=0, zmax=1, xgap=2, ygap=2,
        colorbar={"title": {"text": "within stat"}, "tickvals": [0, 1], "ticktext": ["low", "high"]},
        hovertemplate="%{y}, %{x} = %{text}<extra></extra>"))
    fig.update_layout(template=TEMPLATE, height=max(380, 90 + 40 * len(d)), margin=_MARGIN,
                      yaxis={"autorange": "reversed"}, xaxis={"side": "top"},
                      uirevision="activation-heatmap")
    return fig


def pca_fig(hidden: pd.DataFrame, block_idx: int | None = None) -> go.Figure:
    """Hidden states projected on their first two principal components.

    One block (`block_idx`) as a single scatter, or None for every block as small multiples
    sharing axes (so spread can be compared across depth). Equal aspect: distances are honest.
    """
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
            hovertemplate="sample %{customdata}<br>pc1 %{x:.3f}<br>pc2 %{y:.3f}<extra></extra>"))
        fig.update_layout(template=TEMPLATE, height=520, margin=_MARGIN, xaxis_title="PC 1",
                          yaxis={"title": "PC 2", "scaleanchor": "x", "scaleratio": 1},
                          title={**title, "text": f"{_block_label(block_idx)} at step {step:,}: "
                                                  f"{len(d)} samples"},
                          uirevision=f"pca-{block_idx}")
        return fig
    blocks = sorted(int(b) for b in hidden["block_idx"].unique())
    cols = min(4, len(blocks))
    rows = -(-len(blocks) // cols)
    fig = make_subplots(rows=rows, cols=cols, shared_xaxes="all", shared_yaxes="all",
                        subplot_titles=[_block_label(b) for b in blocks],
                        horizontal_spacing=0.03, vertical_spacing=0.08)
    for i, b in enumerate(blocks):
        d = hidden[hidden["block_idx"] == b]
        fig.add_trace(go.Scattergl(x=d["pc1"], y=d["pc2"], mode="markers", name=_block_label(b),
                                   customdata=d["sample_idx"], showlegend=False,
                                   marker={"color": block_colour(b), "size": 5, "opacity": 0.6},
                                   hovertemplate="sample %{customdata}<br>pc1 %{x:.3f}<br>"
                                                 "pc2 %{y:.3f}<extra></extra>"),
                      row=i // cols + 1, col=i % cols + 1)
    fig.update_annotations(font_size=12)
    fig.update_xaxes(title_text="PC 1", row=rows)
    fig.update_yaxes(title_text="PC 2", col=1)
    fig.update_layout(template=TEMPLATE, height=80 + 300 * rows,
                      margin={"l": 60, "r": 20, "t": 60, "b": 50},
                      title={**title, "text": f"all blocks at step {step:,} (shared axes)"},
                      uirevision="pca-all")
    return fig


# -- Architecture and Growth tabs -------------------------------------------------------------
# Diagram columns, in x units of 0..100 (the figure keeps a minimum width so labels fit).
ARCH_X = {"gutter": (0.5, 8.0), "box": (9.0, 71.0), "label": (9.0, 13.5), "norm": (14.0, 21.5),
          "mixer": (22.0, 33.0), "xattn": (33.5, 40.0), "mod": (62.5, 70.5), "exit": (73.0, 81.0),
          "bar": (83.0, 99.5)}
ARCH_BUS_X = 4.25
ARCH_FFN_END = 62.0
# (fill, line) per part
ARCH_COLOURS = {"moe": ("#cfe2ff", "#0d6efd"), "dense": ("#d1e7dd", "#198754"),
                "mixer": ("#e9ecef", "#6c757d"), "norm": ("#ffffff", "#adb5bd"),
                "ada": ("#e0cffc", "#6f42c1"), "xattn": ("#c3f2e3", "#20c997"),
                "mod": ("#ffe5d0", "#fd7e14"), "exit": ("#f7d6e6", "#d63384"),
                "embed": ("#cff4fc", "#0aa2c0"), "head": ("#e2e3e5", "#343a40"),
                "cascade": ("#efe3d3", "#8c6d46"), "globals": ("#e0cffc", "#6f42c1"),
                "box": ("#ffffff", "#adb5bd"), "bar": ("#dee2e6", "#dee2e6"),
                "bar_active": ("#9ec5fe", "#9ec5fe")}
_CHIP_H = 0.27      # half heights in row units
_BOX_H = 0.37


def _si(n: float) -> str:
    """12345678 -> 12.3 M (three significant digits)."""
    n = float(n)
    for unit, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(n) >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n:.0f}"


def architecture_fig(view) -> go.Figure:
    """A diagram of the model a config builds (`gui.architecture.ModelView`): the embedding with
    its patch scales, every block in block_pattern order (norm or AdaLN-Zero, SSM mixer,
    cross-attention, MoE or dense FFN, MoD), exit heads, the final and MTP heads and the cascade,
    each row with a bar of its parameters (grey: total, blue: active per byte).

    Shapes and annotations carry names (block-3, block-3-ffn-moe, block-3-mod, patch-16, ...)
    so tests can count what was drawn; hovering a row lists its parameters exactly.
    """
    from .architecture import block_hover, exit_label, ffn_label, mtp_labels
    d = view.dims
    shapes: list[dict] = []
    notes: list[dict] = []
    hover_y: list[float] = []
    hover_text: list[str] = []

    def rect(name, x, y, colours, h=_CHIP_H, dash=None, width=1.2):
        fill, line = ARCH_COLOURS[colours] if isinstance(colours, str) else colours
        shapes.append({"type": "rect", "name": name, "x0": x[0], "x1": x[1], "y0": y - h,
                       "y1": y + h, "fillcolor": fill, "layer": "below",
                       "line": {"color": line, "width": width, "dash": dash or "solid"}})

    def text(name, x, y, label, size=11, colour="#212529", anchor="center", bold=False):
        notes.append({"name": name, "x": x, "y": y, "text": f"<b>{label}</b>" if bold else label,
                      "showarrow": False, "xanchor": anchor, "font": {"size": size, "color": colour}})

    def chip(name, x, y, colours, label, size=11):
        rect(name, x, y, colours)
        text(name, (x[0] + x[1]) / 2, y, label, size=size)

    def line(name, x0, y0, x1, y1, colour, width=1.5, dash="solid"):
        shapes.append({"type": "line", "name": name, "x0": x0, "x1": x1, "y0": y0, "y1": y1,
                       "line": {"color": colour, "width": width, "dash": dash}})

    def arrow(y_from, y_to):
        notes.append({"x": 27.5, "y": y_to + _BOX_H, "ax": 27.5, "ay": y_from - _BOX_H, "xref": "x",
                      "yref": "y", "axref": "x", "ayref": "y", "text": "", "showarrow": True,
                      "arrowhead": 2, "arrowsize": 1, "arrowwidth": 1.2, "arrowcolor": "#6c757d"})

    largest = max([view.embed_params, view.breakdown["head"], view.breakdown["cascade"]]
                  + [b.total for b in view.blocks]) or 1

    def bar(name, y, total, active=None):
        x0, x1 = ARCH_X["bar"]
        span = x1 - x0
        rect(name + "-bar", (x0, x0 + span * total / largest), y, "bar", h=0.2, width=0)
        label = _si(total)
        if active is not None:
            rect(name + "-bar-active", (x0, x0 + span * min(active, total) / largest), y,
                 "bar_active", h=0.2, width=0)
            label += f" · {_si(active)}"
        text(name + "-count", x0 + 0.4, y, label, size=10, anchor="left")

    # header row ------------------------------------------------------------------------------
    y = 0.0
    ffn_x0 = ARCH_X["xattn"][1] + 0.5 if d.cross_attn else ARCH_X["xattn"][0]
    header = {"norm": "norm", "mixer": "mixer", "ffn": "FFN", "mod": "MoD", "exit": "exit head",
              "bar": "parameters: total · active/byte"}
    cols = {"norm": ARCH_X["norm"], "mixer": ARCH_X["mixer"], "ffn": (ffn_x0, ARCH_FFN_END),
            "mod": ARCH_X["mod"], "exit": ARCH_X["exit"]}
    if d.cross_attn:
        cols["xattn"], header["xattn"] = ARCH_X["xattn"], "x-attn"
    for key, (x0, x1) in cols.items():
        text(f"header-{key}", (x0 + x1) / 2, y, header[key], size=10, colour="#6c757d")
    text("header-bar", ARCH_X["bar"][0] + 0.4, y, header["bar"], size=10, colour="#6c757d",
         anchor="left")
    text("header-block", sum(ARCH_X["label"]) / 2, y, "block", size=10, colour="#6c757d")

    # embedding --------------------------------------------------------------------------------
    y = -1.0
    rect("embed", ARCH_X["box"], y, "embed", h=_BOX_H)
    text("embed-label", sum(ARCH_X["label"]) / 2, y, "in", size=10, bold=True)
    chip("embed-byte", (ARCH_X["norm"][0], ARCH_X["mixer"][1]), y, ("#ffffff", "#0aa2c0"),
         f"byte embedding 256 × {d.d_model:,}")
    if d.scales:
        x0, x1 = ffn_x0, ARCH_X["mod"][1]
        w = (x1 - x0) / len(d.scales)
        for k, scale in enumerate(d.scales):
            chip(f"patch-{scale}", (x0 + k * w + 0.25, x0 + (k + 1) * w - 0.25), y,
                 ("#ffffff", "#0aa2c0"), f"patch {scale}" if w > 6 else str(scale),
                 size=11 if w > 6 else 10)
    else:
        text("patch-none", (ffn_x0 + ARCH_X["mod"][1]) / 2, y, "no patch scales", size=10,
             colour="#6c757d")
    bar("embed", y, view.embed_params)
    hover_y.append(y)
    hover_text.append(f"<b>embedding</b><br>byte table: {view.breakdown['embedding']:,}<br>"
                      f"patch tables ({', '.join(map(str, d.scales)) or 'none'}): "
                      f"{view.breakdown['patches']:,}")

    # conditioning source ---------------------------------------------------------------------
    linked = [b for b in view.blocks if b.ada or b.xattn]
    if linked:
        chip("globals", ARCH_X["gutter"], y, "globals", f"g ({d.d_globals})", size=10)
        last = -(2.0 + linked[-1].index)
        line("globals-bus", ARCH_BUS_X, y - _CHIP_H, ARCH_BUS_X, last, "#6f42c1", width=1.5)

    # blocks -----------------------------------------------------------------------------------
    for b in view.blocks:
        y_prev, y = y, -(2.0 + b.index)
        arrow(y_prev, y)
        name = f"block-{b.index}"
        rect(name, ARCH_X["box"], y, "mod" if b.mod else "box", h=_BOX_H,
             dash="dash" if b.mod else None, width=1.6 if b.mod else 1.2)
        shapes[-1]["fillcolor"] = "#ffffff"
        text(name + "-label", sum(ARCH_X["label"]) / 2, y, f"{b.index} <i>{b.letter}</i>",
             size=11, bold=True)
        chip(name + ("-ada" if b.ada else "-norm"), ARCH_X["norm"], y, "ada" if b.ada else "norm",
             "AdaLN-Zero" if b.ada else "RMSNorm", size=10)
        chip(name + "-mixer", ARCH_X["mixer"], y, "mixer", "SSM mixer")
        if b.xattn:
            chip(name + "-xattn", ARCH_X["xattn"], y, "xattn", "x-attn", size=10)
            line(name + "-xattn-link", ARCH_BUS_X, y, ARCH_X["box"][0], y, "#20c997", width=1.5,
                 dash="dot" if b.ada else "solid")
        if b.ada:
            line(name + "-ada-link", ARCH_BUS_X, y + (0.12 if b.xattn else 0), ARCH_X["box"][0],
                 y + (0.12 if b.xattn else 0), "#6f42c1", width=1.5)
        chip(name + ("-ffn-moe" if b.moe else "-ffn-dense"), (ffn_x0, ARCH_FFN_END), y,
             "moe" if b.moe else "dense", ffn_label(view, b))
        if b.mod:
            chip(name + "-mod", ARCH_X["mod"], y, "mod", f"MoD {view.capacity:.0%}", size=10)
        if b.exit_head:
            line(name + "-exit-link", ARCH_X["box"][1], y, ARCH_X["exit"][0], y, "#d63384")
            chip(name + "-exit", ARCH_X["exit"], y, "exit", exit_label(b), size=10)
        bar(name, y, b.total, b.active)
        hover_y.append(y)
        hover_text.append(block_hover(view, b))

    # heads and cascade --------------------------------------------------------------------------
    y_prev, y = y, y - 1.0
    arrow(y_prev, y)
    rect("head", ARCH_X["box"], y, "head", h=_BOX_H)
    text("head-label", sum(ARCH_X["label"]) / 2, y, "out", size=10, bold=True)
    chip("head-final", (ARCH_X["norm"][0], ARCH_X["mixer"][1]), y, ("#ffffff", "#343a40"),
         f"norm → W_out {d.d_model:,}→256")
    mtp = mtp_labels(view)
    if mtp:
        x0, x1 = ffn_x0, ARCH_X["mod"][1]
        w = (x1 - x0) / len(mtp)
        for k, label in enumerate(mtp):
            chip(f"head-mtp-{k + 1}", (x0 + k * w + 0.25, x0 + (k + 1) * w - 0.25), y,
                 ("#ffffff", "#343a40"), label, size=10)
    else:
        text("head-mtp-none", (ffn_x0 + ARCH_X["mod"][1]) / 2, y, "no multi-token heads",
             size=10, colour="#6c757d")
    bar("head", y, view.breakdown["head"])
    hover_y.append(y)
    hover_text.append(f"<b>heads</b>: {view.breakdown['head']:,}<br>one W_out ({d.d_model}→256) "
                      f"shared by the final head, {len(d.exit_blocks)} exit head(s) and "
                      f"{d.n_mtp} MTP head(s)")
    if d.cascade:
        y -= 1.0
        rect("cascade", ARCH_X["box"], y, "cascade", h=_BOX_H)
        text("cascade-label", sum(ARCH_X["label"]) / 2, y, "mix", size=10, bold=True)
        chip("cascade-tables", (ARCH_X["norm"][0], ARCH_X["mixer"][1]), y, ("#ffffff", "#8c6d46"),
             "cascade: order 1-3 byte contexts")
        chip("cascade-mixer", (ffn_x0, ARCH_X["mod"][1]), y, ("#ffffff", "#8c6d46"),
             f"mixer ({d.cascade_hidden}) → coder distribution", size=10)
        bar("cascade", y, view.breakdown["cascade"])
        hover_y.append(y)
        hover_text.append(f"<b>cascade</b>: {view.breakdown['cascade']:,} (mixer; the count "
                          "tables are statistics, not parameters)")

    n_rows = -y + 1
    fig = go.Figure(go.Scatter(x=[50] * len(hover_y), y=hover_y, mode="markers",
                               marker={"size": 1, "opacity": 0}, hovertext=hover_text,
                               hoverinfo="text", showlegend=False, name="parts"))
    fig.update_layout(
        template=TEMPLATE, shapes=shapes, annotations=notes, showlegend=False,
        height=int(70 + n_rows * (34 if len(view.blocks) <= 12 else 30)),
        margin={"l": 10, "r": 10, "t": 30, "b": 10}, hovermode="y", hoverdistance=-1,
        dragmode=False, plot_bgcolor="#ffffff",
        title={"text": f"d_model {d.d_model:,} · {len(view.blocks)} blocks · "
                       f"SSM E {d.d_inner:,}, N {d.d_state}, conv {d.d_conv}, {d.n_heads} head(s)"
                       f" · experts {d.n_routed} × width {d.d_ff:,}",
               "font": {"size": 12, "color": "#495057"}, "x": 0.01, "y": 0.995, "yanchor": "top"},
        xaxis={"range": [0, 100], "visible": False, "fixedrange": True},
        yaxis={"range": [y - 0.6, 0.5], "visible": False, "fixedrange": True},
        uirevision="architecture")
    return fig


_GROWTH_ROWS = (("total", "active"), ("flops",), ("memory",))
_GROWTH_STYLE = {"total": ("total parameters", "#0d6efd", "solid"),
                 "active": ("active parameters / byte", "#0d6efd", "dash"),
                 "flops": ("training FLOPs / byte", "#fd7e14", "solid"),
                 "memory": ("training memory / process", "#6f42c1", "solid")}


def _log_ticks(xs) -> dict:
    """Tick values for a log x axis of knob values: powers of two, at most six labelled."""
    xs = [int(x) for x in xs]
    powers = [x for x in xs if x > 0 and x & (x - 1) == 0]
    step = max(1, -(-len(powers) // 6))
    vals = powers[::step]
    text = [f"{v >> 20}M" if v >= 1 << 20 else f"{v >> 10}k" if v >= 1 << 10 else str(v)
            for v in vals]
    return {"tickvals": vals, "ticktext": text}


def _log_y_ticks(values) -> dict:
    """Tick values for a log y axis: 1-2-5 steps, or powers of ten when those are too many;
    {} (plotly's own ticks) for a range under a factor of ~2.5."""
    v = np.asarray([x for x in values if x and np.isfinite(x) and x > 0], dtype=float)
    if v.size == 0:
        return {}
    lo, hi = v.min() / 1.0001, v.max() * 1.0001
    decades = range(int(np.floor(np.log10(lo))), int(np.ceil(np.log10(hi))) + 1)
    ticks = [m * 10.0 ** e for e in decades for m in (1, 2, 5) if lo <= m * 10.0 ** e <= hi]
    if len(ticks) > 7:
        tens = [t for t in ticks if np.isclose(np.log10(t), round(np.log10(t)))]
        ticks = tens if len(tens) >= 2 else ticks[::2]
    if len(ticks) < 2:
        return {}

    def label(t: float) -> str:
        for unit, scale in (("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
            if t >= scale:
                return f"{t / scale:g}{unit}"
        return f"{t:g}"
    return {"tickvals": ticks, "ticktext": [label(t) for t in ticks]}


def growth_fig(sweeps: dict, current: dict, point: dict, log_x: set | None = None) -> go.Figure:
    """Size curves for the Growth tab: one column per swept knob (`sweeps`: key -> DataFrame
    with x, total, active, flops, memory), rows parameters / FLOPs per byte / memory (GB), log y.
    `current`: key -> the knob's chosen value; `point`: the chosen config's sizes (same names),
    marked with a diamond in every panel."""
    sweeps = {k: v for k, v in sweeps.items() if not v.empty}
    if not sweeps:
        return empty_fig("No legal configuration to plot", height=620)
    log_x = log_x or set()
    keys = list(sweeps)
    lines: list[dict] = []
    scale = {"total": 1.0, "active": 1.0, "flops": 1.0, "memory": 1e-9}
    fig = make_subplots(rows=3, cols=len(keys), shared_xaxes="columns", horizontal_spacing=0.07,
                        vertical_spacing=0.07,
                        column_titles=[f"vs {k.rsplit('.', 1)[1]}" for k in keys])
    for c, key in enumerate(keys, start=1):
        df = sweeps[key]
        name = key.rsplit(".", 1)[1]
        for r, cols in enumerate(_GROWTH_ROWS, start=1):
            for col in cols:
                label, colour, dash = _GROWTH_STYLE[col]
                fmt = "%{y:.3g} GB" if col == "memory" else "%{y:.3s}"
                fig.add_trace(go.Scatter(
                    x=df["x"], y=df[col] * scale[col], mode="lines", name=label, legendgroup=col,
                    showlegend=c == 1, line={"color": colour, "dash": dash, "width": 2},
                    hovertemplate=f"{name} %{{x:,}}<br>{label}: {fmt}<extra></extra>"), row=r, col=c)
                if col in point and current.get(key) is not None:
                    fig.add_trace(go.Scatter(
                        x=[current[key]], y=[point[col] * scale[col]], mode="markers",
                        name="chosen", legendgroup="chosen",
                        showlegend=c == 1 and col == "total",
                        marker={"symbol": "diamond", "size": 10, "color": colour,
                                "line": {"color": "#212529", "width": 1.5}},
                        hovertemplate=f"chosen {name} %{{x:,}}<br>{label}: {fmt}<extra></extra>"),
                        row=r, col=c)
            shown = [y * scale[col] for col in cols for y in df[col]]
            shown += [point[col] * scale[col] for col in cols if col in point]
            fig.update_yaxes(type="log", row=r, col=c, **_log_y_ticks(shown))
        if current.get(key) is not None:  # a dotted line at the chosen value, every row
            for r in range(1, 4):
                axis = (r - 1) * len(keys) + c
                suffix = "" if axis == 1 else str(axis)
                lines.append({"type": "line", "xref": f"x{suffix}", "yref": f"y{suffix} domain",
                              "x0": current[key], "x1": current[key], "y0": 0, "y1": 1,
                              "line": {"color": "#adb5bd", "width": 1, "dash": "dot"}})
        if key in log_x:
            fig.update_xaxes(type="log", col=c, **_log_ticks(df["x"]))
        fig.update_xaxes(title_text=name, row=3, col=c)
    for r, title in enumerate(("parameters", "FLOPs / byte", "memory (GB)"), start=1):
        fig.update_yaxes(title_text=title, row=r, col=1)
    fig.update_layout(template=TEMPLATE, height=640, margin={"l": 70, "r": 20, "t": 60, "b": 50},
                      legend={"orientation": "h", "y": 1.09, "x": 0, "font": {"size": 11}},
                      hovermode="closest", uirevision="growth", shapes=lines)
    return fig


# -- Compression and Evaluation tabs ----------------------------------------------------------
# Published enwik8 figures the spec compares against (bits per byte).
REFERENCE_BPB = {"gzip": 2.7, "zstd-22": 1.95, "CMIX": 1.23}
OURS_COLOUR = "#0d6efd"
BASELINE_COLOURS = {"gzip -9": "#6c757d", "zstd -19": "#adb5bd", "zstd -22": "#fd7e14",
                    "xz -9e": "#20c997", "brotli -11": "#6f42c1"}


def compression_comparison_fig(methods: pd.DataFrame, title: str = "") -> go.Figure:
    """Bits per byte of the neural compressor and the classical ones on the same file.

    `methods`: columns method, raw_bytes, packed_bytes, seconds (one row each); the first row is
    u-moec-tiny. Horizontal bars, lower is better, sizes and speed in the hover.
    """
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
    """Evaluation bpb over checkpoints, one line per dataset, with the reference lines.

    `evals`: eval_results columns (step, dataset, bpb, roundtrip_ok); failed round trips are
    marked with a red x. `baselines`: eval_baselines columns; the measured classical compressors
    of the newest evaluated dataset are drawn as dotted lines (same bytes). The dashed lines are
    the published enwik8 figures (gzip 2.7, zstd-22 1.95, CMIX 1.23). `simulated` marks the
    lines "(simulated)", except the datasets in `real` (a coding model evaluated on a simulated run).
    """
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
    fig.update_layout(template=TEMPLATE, height=380, margin=_MARGIN, xaxis_title="step",
                      yaxis_title="bits per byte", hovermode="closest", showlegend=True,
                      legend={"orientation": "h", "y": -0.2}, uirevision="eval-history")
    return fig
