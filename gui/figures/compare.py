"""Compare tab: training loss (raw and EMA, EMA computed on every row) above validation bits with
each run's best point starred, against step, training bytes or wall time; every trace picked for
the view by series.points (a zoom re-aggregates the visible range at full resolution).

The legend names each run by the hyperparameters that differ between the chosen runs
(`config_diff`, `legend_name`); the Compare table (gui/compare.py) shows the same keys.
`runs` are gui.compare.RunData, already loaded: nothing here reads a file.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .base import TEMPLATE
from .series import VIEW_POINTS, ema, points

if TYPE_CHECKING:
    from ..compare import RunData

AXES = {"step": "step", "bytes": "training bytes", "time": "wall time (s)"}
COLOURS = ["#0d6efd", "#d63384", "#198754", "#fd7e14", "#6f42c1", "#20c997", "#dc3545", "#6c757d"]
LEGEND_KEYS = 4   # differing hyperparameters shown in a legend entry (all of them in the table)


# -- legend: only what differs ---------------------------------------------------------------------
def config_diff(runs: list[RunData]) -> dict[str, list[str]]:
    """Per kind ("umoec", "forge"): the config keys whose values differ between the chosen runs
    of that kind (runs without a known config are left out)."""
    out: dict[str, list[str]] = {}
    for kind in ("umoec", "forge"):
        configs = [r.config for r in runs if r.kind == kind and r.config]
        if len(configs) < 2:
            out[kind] = []
            continue
        keys = sorted(set().union(*configs))
        out[kind] = [k for k in keys if len({repr(c.get(k)) for c in configs}) > 1]
    return out


def short_keys(keys: list[str]) -> dict[str, str]:
    """Dotted keys shortened to their last part, or more where that would be ambiguous."""
    out = {}
    for k in keys:
        parts = k.split(".")
        for n in range(1, len(parts) + 1):
            tail = ".".join(parts[-n:])
            if sum(1 for other in keys if other == tail or other.endswith("." + tail)) == 1:
                out[k] = tail
                break
        else:
            out[k] = k
    return out


def fmt_value(v: Any) -> str:
    if isinstance(v, bool) or v is None:
        return str(v).lower()
    if isinstance(v, float):
        return f"{v:g}"
    if isinstance(v, (tuple, list)):
        return ",".join(fmt_value(x) for x in v)
    return str(v)


def legend_name(run: RunData, keys: list[str]) -> str:
    """'name: lr=0.003, top_k=2' with only the differing keys (at most LEGEND_KEYS)."""
    if not keys:
        return run.label + (" (bits/token)" if run.kind == "forge" else "")
    short = short_keys(keys)
    unit = " (bits/token)" if run.kind == "forge" else ""
    own = [k for k in keys if run.config.get(k) is not None]   # a run without config.json has none
    if not own:
        return run.label + unit
    parts = [f"{short[k]}={fmt_value(run.config.get(k))}" for k in own[:LEGEND_KEYS]]
    more = f", +{len(own) - LEGEND_KEYS} more" if len(own) > LEGEND_KEYS else ""
    return f"{run.label}{unit}: {', '.join(parts)}{more}"


# -- figure ----------------------------------------------------------------------------------------
def compare_fig(runs: list[RunData], axis: str = "step", smoothing: float = 0.6,
                log_y: bool = False, window: Optional[tuple[float, float]] = None,
                n_out: int = VIEW_POINTS) -> tuple[go.Figure, list[str]]:
    """(figure, notes): training loss (raw faint, EMA bold) above validation (best starred)."""
    notes: list[str] = []
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.09,
                        row_heights=[0.58, 0.42],
                        subplot_titles=("Training loss: raw and EMA (bits)", "Validation (bits)"))
    diff = config_diff(runs)
    for i, r in enumerate(runs):
        colour = COLOURS[i % len(COLOURS)]
        x = r.x(axis)
        if x is None:
            notes.append(f"{r.label}: not drawn against {AXES[axis]} "
                         f"({r.missing.get(axis, 'no data')})")
            continue
        if axis == "bytes" and r.bytes_note:
            notes.append(f"{r.label}: x = {r.bytes_note}")
        name = legend_name(r, diff.get(r.kind, []))
        smooth = ema(r.train_bits, smoothing)   # on every row, before any downsampling
        rx, ry = points(x, r.train_bits, window, n_out)
        ex, ey = points(x, smooth, window, n_out)
        group = f"run{i}"
        fig.add_trace(go.Scattergl(x=rx, y=ry, mode="lines", name=name, legendgroup=group,
                                   showlegend=False, opacity=0.3, hoverinfo="skip",
                                   line={"color": colour, "width": 1}), row=1, col=1)
        fig.add_trace(go.Scattergl(x=ex, y=ey, mode="lines", name=name, legendgroup=group,
                                   line={"color": colour, "width": 2},
                                   hovertemplate=f"{r.name}<br>%{{x}}: %{{y:.4f}} {r.unit} (EMA)"
                                                 "<extra></extra>"), row=1, col=1)
        vx = r.val_x(axis)
        fig.add_trace(go.Scatter(x=vx.tolist(), y=r.val_bits.tolist(), mode="lines+markers",
                                 name=name, legendgroup=group, showlegend=False,
                                 line={"color": colour, "width": 2}, marker={"size": 4},
                                 hovertemplate=f"{r.name}<br>%{{x}}: val %{{y:.4f}} {r.unit}"
                                               "<extra></extra>"), row=2, col=1)
        best = r.best_val()
        if best is not None:
            bx = float(np.interp(best[0], r.step, x)) if axis != "step" and len(r.step) else best[0]
            fig.add_trace(go.Scatter(x=[bx], y=[best[1]], mode="markers", legendgroup=group,
                                     showlegend=False, name=f"best val {best[1]:.3f}",
                                     marker={"symbol": "star", "size": 13, "color": colour,
                                             "line": {"color": "#000", "width": 1}},
                                     hovertemplate=f"{r.name}: best val {best[1]:.4f} {r.unit} "
                                                   f"at step {best[0]:,}<extra></extra>"),
                          row=2, col=1)
    if not fig.data:
        fig.add_annotation(text="No run can be drawn on this axis", showarrow=False,
                           xref="paper", yref="paper", x=0.5, y=0.5)
    fig.update_layout(template=TEMPLATE, height=620, uirevision="compare",
                      margin={"l": 60, "r": 20, "t": 40, "b": 40},
                      legend={"orientation": "h", "y": -0.12, "x": 0},
                      hovermode="closest")
    fig.update_xaxes(title_text=AXES[axis], row=2, col=1)
    units = {r.unit for r in runs}
    title = ("bits per token (Forge)" if units == {"bits/token"} else
             "bits per byte; per token for Forge runs" if "bits/token" in units else "bits per byte")
    fig.update_yaxes(title_text=title, row=1, col=1)
    fig.update_yaxes(title_text=title, row=2, col=1)
    # The x axes' own uirevision follows the window: when the window changes (a zoom, or
    # follow live / double-click dropping it) plotly must draw the figure's x range, not keep the
    # range a user dragged under the old one; the legend's clicks (layout uirevision) survive.
    x_rev = f"compare-x-{list(window) if window else 'all'}"
    if window:
        fig.update_xaxes(range=list(window), autorange=False, uirevision=x_rev)
    else:
        fig.update_xaxes(autorange=True, uirevision=x_rev)
    if log_y:
        fig.update_yaxes(type="log")
    return fig, notes
