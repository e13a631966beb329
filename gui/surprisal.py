"""Per-byte surprisal as a heat-coloured text (what the compressor "sees"). Pure: no torch, no I/O.

`bits[i]` = -log2 p(byte i | bytes before it) under the model (umoec/generate.py computes it).
Text is shown one character at a time (a UTF-8 character of several bytes gets the mean of its
bytes' bits, its tooltip lists each); colours come from 17 bins of half a bit (0 to >= 8 bits),
classes `sp-0` .. `sp-16` in gui/assets/20_datasets_generate_notify.css (PALETTE below is the same list).
"""
from __future__ import annotations

import math
from collections.abc import Sequence

from dash import html

BIN_BITS = 0.5
N_BINS = 17  # sp-16: 8 bits or more (the cost of a byte under a uniform model)
# YlOrRd, interpolated at 17 points (0 bits pale yellow -> 8+ bits dark red).
PALETTE = ("#ffffcc", "#fff6b6", "#ffeda0", "#fee38b", "#fed976", "#fec661", "#feb24c", "#fea044",
           "#fd8d3c", "#fc6e33", "#fc4e2a", "#f03423", "#e31a1c", "#d00d21", "#bd0026", "#9e0026",
           "#800026")


def bin_of(bits: float) -> int:
    if not math.isfinite(bits):
        return N_BINS - 1
    return min(N_BINS - 1, max(0, int(bits / BIN_BITS)))


def split_chars(data: bytes) -> list[tuple[int, int, str]]:
    """(start, length, shown text) per character: valid UTF-8 sequences as one character,
    newlines as a visible mark plus the line break, other non-printables and invalid bytes
    escaped (\\x1b)."""
    out, i, n = [], 0, len(data)
    while i < n:
        lead = data[i]
        size = 1 if lead < 0x80 else 2 if 0xC2 <= lead <= 0xDF else 3 if 0xE0 <= lead <= 0xEF \
            else 4 if 0xF0 <= lead <= 0xF4 else 1
        try:
            ch = data[i:i + size].decode("utf-8")
        except UnicodeDecodeError:
            size, ch = 1, None
        if ch is None:
            shown = f"\\x{lead:02x}"
        elif ch == "\n":
            shown = "\u23ce\n"
        elif ch == "\t" or ch.isprintable():
            shown = ch
        else:
            shown = f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}"
        out.append((i, size, shown))
        i += size
    return out


def _tooltip(data: bytes, start: int, size: int, bits: Sequence[float]) -> str:
    if size == 1:
        b = data[start]
        ch = chr(b) if 32 <= b < 127 else f"0x{b:02x}"
        return f"{ch!s} (0x{b:02x}): {bits[start]:.2f} bits"
    parts = " + ".join(f"{bits[j]:.2f}" for j in range(start, start + size))
    total = sum(bits[start:start + size])
    return f"{data[start:start + size].decode('utf-8')!r}: {size} bytes, {total:.2f} bits ({parts})"


def render(data: bytes, bits: Sequence[float]) -> list:
    """Spans for `data` coloured by `bits` (len(bits) may be shorter: the rest is uncoloured)."""
    return [html.Span(shown, className="sp-none") if start + size > len(bits)
            else html.Span(shown, className=f"sp-{bin_of(sum(bits[start:start + size]) / size)}",
                           title=_tooltip(data, start, size, bits))
            for start, size, shown in split_chars(data)]


def legend() -> html.Div:
    """The colour scale: one swatch per bin, labelled every 2 bits."""
    swatches = []
    for k in range(N_BINS):
        label = f"{k * BIN_BITS:g}" if k % 4 == 0 else ""
        if k == N_BINS - 1:
            label = f"{k * BIN_BITS:g}+"
        swatches.append(html.Span(label, className=f"sp-{k} sp-swatch",
                                  title=f"{k * BIN_BITS:g}-{(k + 1) * BIN_BITS:g} bits"
                                  if k < N_BINS - 1 else f">= {k * BIN_BITS:g} bits"))
    return html.Div([html.Span("bits per byte:", className="small text-muted me-2"),
                     *swatches], className="d-flex align-items-center surprisal-legend")


def summary(data: bytes, bits: Sequence[float], top: int = 5) -> dict:
    """Totals: bytes, bits, bpb, ideal compressed size, and the most surprising characters."""
    n = len(bits)
    total = float(sum(bits))
    chars = [(sum(bits[s:s + k]), s, k) for s, k, _ in split_chars(data[:n]) if s + k <= n]
    worst = sorted(chars, reverse=True)[:top]
    return {"bytes": n, "bits": total, "bpb": total / n if n else 0.0,
            "ideal_bytes": math.ceil(total / 8),
            "worst": [(data[s:s + k].decode("utf-8", errors="backslashreplace"), b)
                      for b, s, k in worst]}
