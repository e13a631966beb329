"""What every figure shares: the "umoec" plotly template (registered on import), the
blank-with-a-reason figure, the palettes, the reference line and the dcc.Graph config. No Dash.
"""
from __future__ import annotations

import plotly.graph_objects as go
import plotly.io as pio
from plotly.colors import qualitative


def _template() -> str:
    """plotly_white with numbers people read: 55,380 rather than 5.538e+04 or 55.38k."""
    t = go.layout.Template(pio.templates["plotly_white"])
    for axis in ("xaxis", "yaxis"):
        t.layout[axis].update(exponentformat="none", separatethousands=True)
    pio.templates["umoec"] = t
    return "umoec"


TEMPLATE = _template()

BLOCK_COLOURS = ["#0d6efd", "#d63384", "#198754", "#fd7e14", "#6f42c1", "#20c997", "#dc3545",
                 "#0dcaf0", "#6c757d", "#ffc107", "#6610f2", "#795548"]
EXPERT_COLOURS = [c for c in qualitative.Dark24 if c != "#222A2A"] + qualitative.Light24  # no black
REFERENCE_LINE = {"color": "#212529", "width": 1.5, "dash": "dash"}
SVG_MAX_POINTS = 5000   # line_trace: longer traces are drawn with WebGL
MARGIN = {"l": 60, "r": 20, "t": 30, "b": 40}   # the analysis and evaluation charts


def empty_fig(message: str, height: int = 320) -> go.Figure:
    """A blank figure that says why it is blank (never an unexplained empty chart)."""
    fig = go.Figure()
    fig.add_annotation(text=message, showarrow=False, font={"size": 14, "color": "#6c757d"},
                       xref="paper", yref="paper", x=0.5, y=0.5)
    fig.update_layout(template=TEMPLATE, height=height, xaxis={"visible": False},
                      yaxis={"visible": False}, margin={"l": 20, "r": 20, "t": 20, "b": 20})
    return fig


def crosshair(fig: go.Figure) -> go.Figure:
    """A spike line at the cursor's step and one callout of every trace's value there (W&B-style)."""
    fig.update_layout(hovermode="x unified")
    fig.update_xaxes(showspikes=True, spikemode="across", spikesnap="cursor", spikethickness=1,
                     spikedash="dot", spikecolor="#6c757d")
    return fig


def line_trace(**trace) -> go.Scatter | go.Scattergl:
    """A line trace: SVG up to SVG_MAX_POINTS points, WebGL beyond. SVG draws the downsampled
    lines faster (Training tab: 0.25 s against 0.68 s), and a page gets few WebGL contexts
    (Chromium: 16, the oldest chart goes blank), so WebGL is kept for what SVG cannot draw."""
    x = trace.get("x")
    return go.Scatter(**trace) if x is None or len(x) <= SVG_MAX_POINTS else go.Scattergl(**trace)


def graph_config(filename: str) -> dict:
    """dcc.Graph config: toolbar on hover with 'Download plot as a PNG' (2x), no plotly logo."""
    return {"displaylogo": False, "toImageButtonOptions": {
        "format": "png", "filename": f"umoec-{filename}", "scale": 2}}


def block_colour(block_idx: int) -> str:
    return BLOCK_COLOURS[int(block_idx) % len(BLOCK_COLOURS)]


def expert_colour(expert_idx: int) -> str:
    return EXPERT_COLOURS[int(expert_idx) % len(EXPERT_COLOURS)]


def block_label(block_idx) -> str:
    return f"block {int(block_idx)}"
