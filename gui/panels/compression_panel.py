"""Compression tab: compress, decompress and verify files (issue 8; placeholder until then)."""
from __future__ import annotations

from dash import html

from . import placeholder


def layout() -> html.Div:
    return html.Div(placeholder.layout(
        "Compression",
        "Compress a file (path or upload) with a checkpoint of the selected run, compare with "
        "gzip, zstd -22, xz and brotli, and verify the round trip (sha256).",
        "Not built yet: it needs the compressor (bin.compress / bin.decompress, issue 5) and is "
        "the compression-tab issue (8).",
        "Today: python -m bin.simulate_training writes simulated compression_jobs rows that this "
        "tab will list."),
        id="compression-panel")
