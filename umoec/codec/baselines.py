"""Classical compressors on the same bytes, in-process (no CLI tools): size, bpb, time.

gzip -9 (gzip module, mtime 0), xz -9e (lzma preset 9 | PRESET_EXTREME), zstd -19 and -22
(zstandard; 22 is an "ultra" level), brotli -11. Every result is checked to round-trip.
"""
from __future__ import annotations

import gzip
import lzma
import time
from dataclasses import dataclass
from typing import Callable

import brotli
import zstandard


@dataclass(frozen=True)
class BaselineResult:
    name: str
    raw_bytes: int
    packed_bytes: int
    compress_s: float
    decompress_s: float

    @property
    def bpb(self) -> float:
        return 8.0 * self.packed_bytes / self.raw_bytes if self.raw_bytes else 0.0

    @property
    def compress_bytes_per_s(self) -> float:
        return self.raw_bytes / self.compress_s if self.compress_s > 0 else 0.0

    @property
    def decompress_bytes_per_s(self) -> float:
        return self.raw_bytes / self.decompress_s if self.decompress_s > 0 else 0.0


def _zstd(level: int) -> tuple[Callable[[bytes], bytes], Callable[[bytes], bytes]]:
    return (lambda d: zstandard.ZstdCompressor(level=level).compress(d),
            lambda b: zstandard.ZstdDecompressor().decompress(b, max_output_size=1 << 40))


BASELINES: dict[str, tuple[Callable[[bytes], bytes], Callable[[bytes], bytes]]] = {
    "gzip -9": (lambda d: gzip.compress(d, compresslevel=9, mtime=0), gzip.decompress),
    "xz -9e": (lambda d: lzma.compress(d, preset=9 | lzma.PRESET_EXTREME), lzma.decompress),
    "zstd -19": _zstd(19),
    "zstd -22": _zstd(22),
    "brotli -11": (lambda d: brotli.compress(d, quality=11), brotli.decompress),
}


def run_baseline(name: str, data: bytes) -> BaselineResult:
    pack, unpack = BASELINES[name]
    t0 = time.perf_counter()
    blob = pack(data)
    t1 = time.perf_counter()
    back = unpack(blob)
    t2 = time.perf_counter()
    if back != data:
        raise RuntimeError(f"baseline {name} did not round-trip")
    return BaselineResult(name, len(data), len(blob), t1 - t0, t2 - t1)


def run_baselines(data: bytes, names=None) -> list[BaselineResult]:
    """Every baseline (or those named) on `data`, in the order of BASELINES."""
    return [run_baseline(name, bytes(data)) for name in (names or BASELINES)]
