"""Evaluation tab: enwik8 benchmark with roundtrip verification (issue 8; placeholder)."""
from __future__ import annotations

from dash import html

from . import placeholder


def layout() -> html.Div:
    return html.Div(placeholder.layout(
        "Evaluation",
        "Run the enwik8 evaluation (scripts/eval_enwik8.sh) on a checkpoint, list bpb against "
        "gzip (2.7), zstd-22 (1.95) and CMIX (1.23), show the roundtrip status and the bpb "
        "history.",
        "Not built yet: it needs the compressor and the evaluation script (issues 5 and 8).",
        "Today: validation bpb of the selected run is on the Training tab (pink line, best value "
        "starred)."),
        id="eval-panel")
