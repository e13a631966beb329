"""Compare tab: training loss (raw, and EMA on every row) above validation bits with each run's best
point starred, and `system_fig`: one system metric of every run in its loss-chart colour. The legend
names runs by the hyperparameters that differ (`config_diff`). Traces are picked for the view by
series.points (a zoom re-aggregates the visible range at full resolution). Nothing here reads a file.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .base import TEMPLATE, empty_fig, line_trace
from .series import VIEW_POINTS, ema, points

if TYPE_CHECKING:
    from ..services.compare import RunData

AXES = {"step": "step", "bytes": "training bytes", "time": "wall time (s)"}
COLOURS = ["#0d6efd", "#d63384", "#198754", "#fd7e14", "#6f42c1", "#20c997", "#dc3545", "#6c757d"]
LEGEND_KEYS = 4   # differing hyperparameters shown in a legend entry (all of them in the table)
# system_metrics column -> (selector label, y axis title, divisor from the stored unit)
SYSTEM_METRICS = {
    "cpu_percent": ("CPU %", "CPU (% of one core)", 1.0),
    "rss_bytes": ("RSS MiB", "resident memory (MiB)", 2.0 ** 20),
    "gpu_util": ("GPU util %", "GPU utilisation (%)", 1.0),
    "gpu_mem_bytes": ("GPU memory MiB", "GPU memory allocated (MiB)", 2.0 ** 20),
    "disk_free_bytes": ("disk free GiB", "disk free (GiB)", 2.0 ** 30),
}
SYSTEM_HEIGHT = 320


def run_colour(i: int) -> str:
    """The colour of the i-th chosen run, the same in every Compare chart."""
    return COLOURS[i % len(COLOURS)]


# -- legend: only what differs ---------------------------------------------------------------------
def config_diff(runs: list[RunData]) -> dict[str, list[str]]:
    """Per kind ("umoec", "forge"): the config keys whose values differ between the chosen runs
    of that kind (runs without a known config are left out)."""
    def differing(configs: list[dict]) -> list[str]:
        keys = sorted(set().union(*configs)) if len(configs) > 1 else []
        return [k for k in keys if len({repr(c.get(k)) for c in configs}) > 1]
    return {kind: differing([r.config for r in runs if r.kind == kind and r.config])
            for kind in ("umoec", "forge")}


def short_keys(keys: list[str]) -> dict[str, str]:
    """Dotted keys shortened to their last part, or more where that would be ambiguous."""
    def short(key: str) -> str:
        parts = key.split(".")
        tails = (".".join(parts[-n:]) for n in range(1, len(parts) + 1))
        return next((t for t in tails if sum(o == t or o.endswith("." + t) for o in keys) == 1), key)
    return {k: short(k) for k in keys}


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
    unit = " (bits/token)" if run.kind == "forge" else ""
    own = [k for k in keys if run.config.get(k) is not None]   # a run without config.json has none
    if not own:
        return run.label + unit
    short = short_keys(keys)
    parts = [f"{short[k]}={fmt_value(run.config.get(k))}" for k in own[:LEGEND_KEYS]]
    more = f", +{len(own) - LEGEND_KEYS} more" if len(own) > LEGEND_KEYS else ""
    return f"{run.label}{unit}: {', '.join(parts)}{more}"


# -- figure ----------------------------------------------------------------------------------------
def compare_fig(runs: list[RunData], axis: str = "step", smoothing: float = 0.6,
                log_y: bool = False, window: tuple[float, float] | None = None,
                n_out: int = VIEW_POINTS) -> tuple[go.Figure, list[str]]:
    """(figure, notes): training loss (raw faint, EMA bold) above validation (best starred)."""
    notes: list[str] = []
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.09,
                        row_heights=[0.58, 0.42],
                        subplot_titles=("Training loss: raw and EMA (bits)", "Validation (bits)"))
    diff = config_diff(runs)
    for i, r in enumerate(runs):
        colour = run_colour(i)
        x = r.x(axis)
        if x is None:
            notes.append(f"{r.label}: not drawn against {AXES[axis]} "
                         f"({r.missing.get(axis, 'no data')})")
            continue
        if axis == "bytes" and r.bytes_note:
            notes.append(f"{r.label}: x = {r.bytes_note}")
        group = {"name": legend_name(r, diff.get(r.kind, [])), "legendgroup": f"run{i}"}
        rx, ry = points(x, r.train_bits, window, n_out)
        ex, ey = points(x, ema(r.train_bits, smoothing), window, n_out)   # EMA on every row
        fig.add_trace(line_trace(x=rx, y=ry, mode="lines", showlegend=False, opacity=0.3, hoverinfo="skip",
                                 line={"color": colour, "width": 1}, **group), row=1, col=1)
        fig.add_trace(line_trace(x=ex, y=ey, mode="lines", line={"color": colour, "width": 2}, **group,
                                 hovertemplate=f"{r.name}<br>%{{x}}: %{{y:.4f}} {r.unit} (EMA)"
                                               "<extra></extra>"), row=1, col=1)
        vx = r.x_at(r.val_step, axis)
        fig.add_trace(go.Scatter(x=vx.tolist(), y=r.val_bits.tolist(), mode="lines+markers",
                                 showlegend=False, line={"color": colour, "width": 2}, marker={"size": 4},
                                 **group,
                                 hovertemplate=f"{r.name}<br>%{{x}}: val %{{y:.4f}} {r.unit}"
                                               "<extra></extra>"), row=2, col=1)
        best = r.best_val()
        if best is not None:
            bx = float(np.interp(best[0], r.step, x)) if axis != "step" and len(r.step) else best[0]
            fig.add_trace(go.Scatter(x=[bx], y=[best[1]], mode="markers", legendgroup=group["legendgroup"],
                                     showlegend=False, name=f"best val {best[1]:.3f}",
                                     marker={"symbol": "star", "size": 13, "color": colour,
                                             "line": {"color": "#000", "width": 1}},
                                     hovertemplate=f"{r.name}: best val {best[1]:.4f} {r.unit} "
                                                   f"at step {best[0]:,}<extra></extra>"),
                          row=2, col=1)
    _say_when_empty(fig)
    fig.update_layout(template=TEMPLATE, height=620, uirevision="compare",
                      margin={"l": 60, "r": 20, "t": 40, "b": 40},
                      legend={"orientation": "h", "y": -0.12, "x": 0},
                      hovermode="closest")
    fig.update_xaxes(title_text=AXES[axis], row=2, col=1)
    units = {r.unit for r in runs}
    title = ("bits per token (Forge)" if units == {"bits/token"} else
             "bits per byte; per token for Forge runs" if "bits/token" in units else "bits per byte")
    fig.update_yaxes(title_text=title, type="log" if log_y else None)
    # The x axes' own uirevision follows the window, so a new window (a zoom, or follow live /
    # double-click dropping it) is drawn, not the range dragged under the old one; the legend's
    # clicks (layout uirevision) survive.
    fig.update_xaxes(range=list(window) if window else None, autorange=not window,
                     uirevision=f"compare-x-{list(window) if window else 'all'}")
    return fig, notes


def _say_when_empty(fig: go.Figure) -> None:
    if not fig.data:
        fig.add_annotation(text="No run can be drawn on this axis", showarrow=False,
                           xref="paper", yref="paper", x=0.5, y=0.5)


# -- system metrics --------------------------------------------------------------------------------
def _recorded(run: RunData, column: str) -> bool:
    values = run.system.get(column)
    return values is not None and bool(np.isfinite(values).any())


def system_options(runs: list[RunData]) -> list[str]:
    """The SYSTEM_METRICS columns at least one of `runs` recorded (GPU ones only from GPU runs)."""
    return [c for c in SYSTEM_METRICS if any(_recorded(r, c) for r in runs)]


def system_fig(runs: list[RunData], metric: str, axis: str = "step",
               n_out: int = VIEW_POINTS) -> tuple[go.Figure, list[str]]:
    """(figure, notes): `metric` of every run that recorded it, one line per run in its loss
    chart colour; the notes name the runs not drawn and why."""
    if not any(r.system for r in runs):
        return empty_fig("None of the picked runs recorded system metrics: runs made before the "
                         "sampler existed and Forge runs have none", height=SYSTEM_HEIGHT), []
    label, title, scale = SYSTEM_METRICS[metric]
    notes: list[str] = []
    fig = go.Figure()
    diff = config_diff(runs)
    for i, r in enumerate(runs):
        if not r.system:
            why = "Forge runs log none" if r.kind == "forge" else "the run predates the sampler"
            notes.append(f"{r.label}: no system metrics ({why})")
            continue
        if not _recorded(r, metric):
            notes.append(f"{r.label}: no {label} recorded")
            continue
        x = r.x_at(r.system["step"], axis)
        if x is None:
            notes.append(f"{r.label}: not drawn against {AXES[axis]} ({r.missing.get(axis, 'no data')})")
            continue
        y = r.system[metric] / scale
        keep = np.isfinite(x)     # bytes/time need a training row at or before the sample
        px, py = points(x[keep], y[keep], None, n_out)
        fig.add_trace(line_trace(x=px, y=py, mode="lines", name=legend_name(r, diff.get(r.kind, [])),
                                line={"color": run_colour(i), "width": 2},
                                hovertemplate=f"{r.name}<br>%{{x}}: %{{y:,.1f}} {label}"
                                              "<extra></extra>"))
    _say_when_empty(fig)
    fig.update_layout(template=TEMPLATE, height=SYSTEM_HEIGHT, uirevision="compare-system",
                      margin={"l": 60, "r": 20, "t": 20, "b": 40}, hovermode="closest",
                      showlegend=True, legend={"orientation": "h", "y": -0.25, "x": 0},
                      xaxis_title=AXES[axis], yaxis={"title": title, "rangemode": "tozero"})
    return fig, notes
