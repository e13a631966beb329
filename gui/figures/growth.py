"""Growth tab: size curves (parameters, FLOPs per byte, training memory) against each swept
knob, log y, the chosen config marked."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..view.growth import fmt_knob
from .base import TEMPLATE, empty_fig

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
    return {"tickvals": vals, "ticktext": [fmt_knob(v) for v in vals]}


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
    """Size curves, one column per swept knob (`sweeps`: key -> view/growth.sweep), rows parameters /
    FLOPs per byte / memory (log y); the chosen values (`current`) and sizes (`point`) marked."""
    sweeps = {k: v for k, v in sweeps.items() if not v.empty}
    if not sweeps:
        return empty_fig("No legal configuration to plot", height=620)
    log_x = log_x or set()
    keys = list(sweeps)
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
            fig.add_vline(x=current[key], row="all", col=c,
                          line={"color": "#adb5bd", "width": 1, "dash": "dot"})
        if key in log_x:
            fig.update_xaxes(type="log", col=c, **_log_ticks(df["x"]))
        fig.update_xaxes(title_text=name, row=3, col=c)
    for r, title in enumerate(("parameters", "FLOPs / byte", "memory (GB)"), start=1):
        fig.update_yaxes(title_text=title, row=r, col=1)
    fig.update_layout(template=TEMPLATE, height=640, margin={"l": 70, "r": 20, "t": 60, "b": 50},
                      legend={"orientation": "h", "y": 1.09, "x": 0, "font": {"size": 11}},
                      hovermode="closest", uirevision="growth")
    return fig
