"""`umc -l`: what a .umc file's header says, read without decoding (no model needed).

The table has one row per file: compressed and original size, ratio, bits per byte (of the whole
.umc file, header included), profile, model name and short hash, the original's sha256; -v
prints every header field instead. A file of several frames is read through (each frame's
header; payloads are read, not decoded) to sum its frames; its sha256 column says how many
frames carry their own.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

from ..codec import CodecStats, Header, read_header
from ..codec.container import MAX_HEADER, format_of
from ..codec.frames import FRAME_KEY, frame_of, frames


@dataclass(frozen=True)
class Row:
    path: str
    compressed: int      # bytes of the .umc file
    header: Header       # the first frame's
    original: int = -1   # the sum over frames (-1: the header's own size, one frame)
    frames: int = 1
    container: int = 0   # the container format (2 or 3) of the first frame

    @property
    def size(self) -> int:
        return self.header.original_size if self.original < 0 else self.original

    @property
    def sha256(self) -> str:
        return self.header.sha256.hex() if self.frames == 1 else f"({self.frames} frames, each its own)"

    @property
    def stats(self) -> CodecStats:
        return CodecStats(self.size, self.compressed, 0.0)

    @property
    def model(self) -> str:
        if not any(self.header.model_hash):
            return "none"   # the cm profile: no network, no model
        return f"{self.header.model_name or '?'} ({self.header.model_hash.hex()[:12]})"


def read_row(path: str) -> Row:
    """The header of `path` (only its first MAX_HEADER bytes are read when it has one frame)."""
    with open(path, "rb") as fh:
        head = fh.read(MAX_HEADER)
        size = os.fstat(fh.fileno()).st_size
        header = read_header(head)
        container = format_of(head)
        if frame_of(header) is None:
            return Row(path, size, header, container=container)
        fh.seek(0)
        sizes = [h.original_size for h, _ in frames(fh)]
    return Row(path, size, header, sum(sizes), len(sizes), container)


TITLES = ("compressed", "original", "ratio", "bpb", "profile", "model", "sha256", "file")


def _cells(r: Row) -> tuple[str, ...]:
    s = r.stats
    return (f"{r.compressed:,}", f"{r.size:,}", f"{s.ratio:.2f}", f"{s.bpb:.3f}",
            r.header.profile, r.model, r.sha256, r.path)


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
    meta = {k: v for k, v in h.metadata.items()
            if k not in ("globals", FRAME_KEY, "record")}   # globals: model input, opaque
    fields = [
        ("original", f"{r.size:,} bytes"),
        ("frames", f"{r.frames} (fields below: the first frame's)" if r.frames > 1 else "1"),
        ("sha256", r.sha256),
        ("compressed", f"{r.compressed:,} bytes"),
        ("ratio", f"{s.ratio:.3f}"),
        ("bpb", f"{s.bpb:.4f}"),
        ("model", h.model_name or ("?" if any(h.model_hash) else "none (the cm profile)")),
        ("model hash", h.model_hash.hex()),
        ("profile", h.profile),
        ("container", f"format {r.container}"),
        ("engine", f"v{h.engine}"),
        ("coder", f"{h.coder}, {h.precision}-bit state, 2^{h.prob_precision} frequency total"
                  + (", sharpening" if h.sharpening else "")),
        ("filter", "x86 (call and jump targets made absolute)" if h.x86 else "none"),
    ] + ([("records", f"{h.metadata['record']} bytes (the mixing stage's contexts for them)")]
         if "record" in h.metadata else []) + [
        ("streams", str(h.streams)),
        ("block size", f"{h.block_size:,}"),
        ("adapt every", f"{h.adapt_every:,}" if h.adapt_every else "off"),
    ] + [(k.replace("_", " "), str(v)) for k, v in sorted(meta.items())]
    return [r.path] + [f"  {k:<13} {v}" for k, v in fields]
