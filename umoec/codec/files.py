"""File helpers: compress or decompress a file without ever leaving partial output behind.

The whole result is produced (and, for decompression, verified against the sha256 in the header)
in memory, then written to a temp file next to the target, fsynced and renamed over it
(umoec.run.atomic). On any failure the temp file is removed and the target is untouched.
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from ..run.atomic import atomic_write_bytes
from .codec import CodecSettings, Progress, compress, decompress
from .errors import CodecError


@dataclass(frozen=True)
class CodecStats:
    raw_bytes: int
    packed_bytes: int
    seconds: float

    @property
    def bpb(self) -> float:
        """Bits of .umc per byte of original (the whole file, header included)."""
        return 8.0 * self.packed_bytes / self.raw_bytes if self.raw_bytes else 0.0

    @property
    def ratio(self) -> float:
        return self.raw_bytes / self.packed_bytes if self.packed_bytes else 0.0

    @property
    def bytes_per_s(self) -> float:
        return self.raw_bytes / self.seconds if self.seconds > 0 else 0.0

    def summary(self) -> str:
        return (f"raw {self.raw_bytes:,} B, compressed {self.packed_bytes:,} B, {self.bpb:.3f} bpb, "
                f"ratio {self.ratio:.2f}, {self.seconds:.2f} s, {self.bytes_per_s:,.0f} B/s")


def _read(path: str | os.PathLike, what: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise CodecError(f"cannot read {what} {path}: {exc.strerror or exc}") from None


def compress_file(in_path: str | os.PathLike, out_path: str | os.PathLike, predictor,
                  settings: CodecSettings = CodecSettings(), *,
                  progress: Optional[Progress] = None) -> CodecStats:
    data = _read(in_path, "input file")
    t0 = time.perf_counter()
    blob = compress(data, predictor, settings, progress=progress)
    atomic_write_bytes(out_path, blob)
    return CodecStats(len(data), len(blob), time.perf_counter() - t0)


def decompress_file(in_path: str | os.PathLike, out_path: str | os.PathLike, predictor, *,
                    progress: Optional[Progress] = None) -> CodecStats:
    blob = _read(in_path, ".umc file")
    t0 = time.perf_counter()
    data = decompress(blob, predictor, progress=progress)
    atomic_write_bytes(out_path, data)
    return CodecStats(len(data), len(blob), time.perf_counter() - t0)
