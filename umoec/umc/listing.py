"""`umc -l`: what a .umc file's header says, read without decoding (no model needed).

The table has one row per file: compressed and original size, ratio, bits per byte (of the whole
.umc file, header included), profile, model name and short hash, the original's sha256; -v
prints every header field instead.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

from ..codec import CodecStats, Header, read_header
from ..codec.container import MAX_HEADER


@dataclass(frozen=True)
class Row:
    path: str
    compressed: int      # bytes of the .umc file
    header: Header

    @property
    def stats(self) -> CodecStats:
        return CodecStats(self.header.original_size, self.compressed, 0.0)

    @property
    def model(self) -> str:
        if not any(self.header.model_hash):
            return "none"   # the cm profile: no network, no model
        return f"{self.header.model_name or '?'} ({self.header.model_hash.hex()[:12]})"


def read_row(path: str) -> Row:
    """The header of `path` (only its first MAX_HEADER bytes are read)."""
    with open(path, "rb") as fh:
        head = fh.read(MAX_HEADER)
        size = os.fstat(fh.fileno()).st_size
    return Row(path, size, read_header(head))


TITLES = ("compressed", "original", "ratio", "bpb", "profile", "model", "sha256", "file")


def _cells(r: Row) -> tuple[str, ...]:
    s = r.stats
    return (f"{r.compressed:,}", f"{r.header.original_size:,}", f"{s.ratio:.2f}", f"{s.bpb:.3f}",
            r.header.profile, r.model, r.header.sha256.hex(), r.path)


def table(rows: list[Row]) -> list[str]:
    """Aligned lines: a title line, then one per file (numbers right-aligned)."""
    cells = [TITLES] + [_cells(r) for r in rows]
    widths = [max(len(c[i]) for c in cells) for i in range(len(TITLES))]
    right = {0, 1, 2, 3}

    def line(c):
        return "  ".join(v.rjust(w) if i in right else v.ljust(w)
                         for i, (v, w) in enumerate(zip(c, widths, strict=True))).rstrip()
    return [line(c) for c in cells]


def details(r: Row) -> list[str]:
    """Every header field of one file, one per line (-l -v)."""
    h, s = r.header, r.stats
    meta = {k: v for k, v in h.metadata.items() if k != "globals"}  # globals: model input, opaque
    fields = [
        ("original", f"{h.original_size:,} bytes"),
        ("sha256", h.sha256.hex()),
        ("compressed", f"{r.compressed:,} bytes"),
        ("ratio", f"{s.ratio:.3f}"),
        ("bpb", f"{s.bpb:.4f}"),
        ("model", h.model_name or ("?" if any(h.model_hash) else "none (the cm profile)")),
        ("model hash", h.model_hash.hex()),
        ("profile", h.profile),
        ("engine", f"v{h.engine}"),
        ("coder", f"{h.coder}, {h.precision}-bit state, 2^{h.prob_precision} frequency total"
                  + (", sharpening" if h.sharpening else "")),
        ("streams", str(h.streams)),
        ("block size", f"{h.block_size:,}"),
        ("adapt every", f"{h.adapt_every:,}" if h.adapt_every else "off"),
    ] + [(k.replace("_", " "), str(v)) for k, v in sorted(meta.items())]
    return [r.path] + [f"  {k:<13} {v}" for k, v in fields]
