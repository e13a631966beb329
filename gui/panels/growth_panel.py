"""Growth tab: sliders that show how size, compute and memory scale (issue 7; placeholder)."""
from __future__ import annotations

from dash import html

from . import placeholder


def layout() -> html.Div:
    return html.Div(placeholder.layout(
        "Growth",
        "Sliders for d_model, n_blocks, n_routed, top_k, d_ff and context_len with live parameter "
        "count, FLOPs per byte, training memory and a compute-optimal training length; a button "
        "copies the chosen values into the config editor.",
        "Not built yet: it is part of the analysis-tabs issue (7).",
        "Today: change those fields in the config sidebar; the derived quantities update live."),
        id="growth-panel")
