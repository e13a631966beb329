"""Architecture tab: a diagram of the configured model (issue 7; placeholder until then)."""
from __future__ import annotations

from dash import html

from . import placeholder


def layout() -> html.Div:
    return html.Div(placeholder.layout(
        "Architecture",
        "A diagram of the configured model: blocks in block_pattern order, which have MoE, MoD, "
        "early exits and AdaLN-Zero, patch scales and heads, with parameter counts per block.",
        "Not built yet: it is part of the analysis-tabs issue (7) and needs the model's sizing "
        "functions (umoec/sizing.py).",
        "Today: the config sidebar shows every field of the model and the derived quantities."),
        id="arch-panel")
