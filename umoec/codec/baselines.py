"""Classical compressors on the same bytes: size, bpb, time, each result checked to round-trip.

Always here (in-process): gzip -9 (gzip module, mtime 0), xz -9e (lzma preset 9 |
PRESET_EXTREME), zstd -19 and -22 (zstandard; 22 is an "ultra" level), brotli -11.

The strong peers people who care about ratio use, each when installed (a peer that is missing is
a skipped column with the reason, never a crash): PPMd variant I order 16 (PyPI pyppmd), zpaq
-m4 and -m5 (Debian zpaq; sizes include its archive overhead, ~100 bytes), bzip3 (Debian bzip3),
paq9a (Debian python3-paq, through the system Python: its module is not in our venv). Command-
line peers run as argument lists in a temporary folder, never through a shell. A peer that fails
on an input (pyppmd 1.x cannot decode what it wrote for some executables) raises PeerFailed
with its reason; run_baselines can collect those instead, as columns left out.

`run_primed` measures the conditional size of data for a coder that already saw `prime`:
size(prime + data) - size(prime), the fair comparison for a model trained on `prime`'s source.
"""
from __future__ import annotations

import functools
import gzip
import lzma
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import brotli
import zstandard

from .. import units

Codec = tuple[Callable[[bytes], bytes], Callable[[bytes], bytes]]
PEER_TIMEOUT_S = 600


@dataclass(frozen=True)
class BaselineResult:
    name: str
    raw_bytes: int
    packed_bytes: int
    compress_s: float
    decompress_s: float

    @property
    def bpb(self) -> float:
        return units.bpb(self.packed_bytes, self.raw_bytes)

    @property
    def compress_bytes_per_s(self) -> float:
        return self.raw_bytes / self.compress_s if self.compress_s > 0 else 0.0

    @property
    def decompress_bytes_per_s(self) -> float:
        return self.raw_bytes / self.decompress_s if self.decompress_s > 0 else 0.0


def _zstd(level: int) -> Codec:
    return (lambda d: zstandard.ZstdCompressor(level=level).compress(d),
            lambda b: zstandard.ZstdDecompressor().decompress(b, max_output_size=1 << 40))


BASELINES: dict[str, Codec] = {
    "gzip -9": (lambda d: gzip.compress(d, compresslevel=9, mtime=0), gzip.decompress),
    "xz -9e": (lambda d: lzma.compress(d, preset=9 | lzma.PRESET_EXTREME), lzma.decompress),
    "zstd -19": _zstd(19),
    "zstd -22": _zstd(22),
    "brotli -11": (lambda d: brotli.compress(d, quality=11), brotli.decompress),
}


# -- strong peers, each optional ---------------------------------------------------------------
def _run(argv: list[str], data: bytes = b"", cwd: str | None = None) -> bytes:
    res = subprocess.run(argv, input=data, capture_output=True, cwd=cwd, timeout=PEER_TIMEOUT_S)
    if res.returncode:
        err = res.stderr.decode(errors="replace").strip().splitlines()
        raise RuntimeError(f"{Path(argv[0]).name} failed (exit {res.returncode})"
                           + (f": {err[-1]}" if err else ""))
    return res.stdout


def _ppmd() -> tuple[Codec | None, str]:
    try:
        import pyppmd
    except ImportError:
        return None, "PyPI pyppmd is not installed"
    opts = {"max_order": 16, "mem_size": 256 << 20, "variant": "I"}
    return (lambda d: pyppmd.compress(d, **opts), lambda b: pyppmd.decompress(b, **opts)), ""


def _zpaq(method: str) -> tuple[Codec | None, str]:
    exe = shutil.which("zpaq")
    if exe is None:
        return None, "the zpaq command is not installed (Debian zpaq)"

    def pack(data: bytes) -> bytes:
        with tempfile.TemporaryDirectory(prefix="umoec-zpaq-") as t:
            (Path(t) / "in").write_bytes(data)
            _run([exe, "add", "a.zpaq", "in", method], cwd=t)
            return (Path(t) / "a.zpaq").read_bytes()

    def unpack(blob: bytes) -> bytes:
        with tempfile.TemporaryDirectory(prefix="umoec-zpaq-") as t:
            (Path(t) / "a.zpaq").write_bytes(blob)
            _run([exe, "extract", "a.zpaq", "-to", "out"], cwd=t)
            return (Path(t) / "out" / "in").read_bytes()
    return (pack, unpack), ""


def _bzip3() -> tuple[Codec | None, str]:
    exe = shutil.which("bzip3")
    if exe is None:
        return None, "the bzip3 command is not installed (Debian bzip3)"
    return (lambda d: _run([exe, "-e", "-c"], d), lambda b: _run([exe, "-d", "-c"], b)), ""


def _paq9a() -> tuple[Codec | None, str]:
    py = shutil.which("python3", path="/usr/bin")
    if py is None or subprocess.run([py, "-c", "import paq"], capture_output=True,
                                    timeout=60).returncode:
        return None, "the system Python has no paq module (Debian python3-paq)"
    code = "import sys, paq; sys.stdout.buffer.write(paq.{}(sys.stdin.buffer.read()))"
    return (lambda d: _run([py, "-c", code.format("compress")], d),
            lambda b: _run([py, "-c", code.format("decompress")], b)), ""


PEER_FACTORIES: dict[str, Callable[[], tuple[Codec | None, str]]] = {
    "PPMd -o16": _ppmd,
    "zpaq -m4": lambda: _zpaq("-m4"),
    "zpaq -m5": lambda: _zpaq("-m5"),
    "bzip3": _bzip3,
    "paq9a": _paq9a,
}


@functools.lru_cache(maxsize=1)
def _peers() -> tuple[dict[str, Codec], dict[str, str]]:
    found, missing = {}, {}
    for name, factory in PEER_FACTORIES.items():
        codec, why = factory()
        if codec is None:
            missing[name] = why
        else:
            found[name] = codec
    return found, missing


def peers() -> dict[str, Codec]:
    """The strong peers installed here, by name."""
    return dict(_peers()[0])


def skipped_peers() -> dict[str, str]:
    """name -> why, for every strong peer that is not installed here."""
    return dict(_peers()[1])


def available() -> dict[str, Codec]:
    """Every baseline that can run here: the in-process ones, then the installed peers."""
    return {**BASELINES, **peers()}


# -- measuring ---------------------------------------------------------------------------------
def _codec(name: str) -> Codec:
    codecs = available()
    if name not in codecs:
        why = skipped_peers().get(name, "no such baseline")
        raise KeyError(f"baseline {name!r} cannot run here: {why}")
    return codecs[name]


class PeerFailed(RuntimeError):
    """A compressor crashed on an input or did not give it back; the message says which and why."""


def _timed(name: str, fn: Callable[[bytes], bytes], data: bytes) -> tuple[bytes, float]:
    t0 = time.perf_counter()
    try:
        out = fn(data)
    except Exception as exc:       # a peer's own bug or a failed command: not ours to raise
        raise PeerFailed(f"{name} failed on this input ({type(exc).__name__}: "
                         f"{str(exc)[:200]})") from None
    return out, time.perf_counter() - t0


def _round_trip(name: str, data: bytes) -> tuple[int, float, float]:
    """(packed bytes, compress s, decompress s) of `name` on `data`, checked to give it back."""
    pack, unpack = _codec(name)
    blob, packing = _timed(name, pack, data)
    back, unpacking = _timed(name, unpack, blob)
    if back != data:
        raise PeerFailed(f"{name} did not give back its input (it decoded {len(back):,} bytes "
                         f"of {len(data):,}, not the same)")
    return len(blob), packing, unpacking


def run_baseline(name: str, data: bytes) -> BaselineResult:
    return BaselineResult(name, len(data), *_round_trip(name, bytes(data)))


def run_baselines(data: bytes, names=None, failed: dict | None = None) -> list[BaselineResult]:
    """Every baseline that can run here (or those named) on `data`, in the order of available();
    with `failed`, a peer that fails is left out and its reason put there (name -> why)."""
    out = []
    for name in names or available():
        try:
            out.append(run_baseline(name, data))
        except PeerFailed as exc:
            if failed is None:
                raise
            failed[name] = str(exc)
    return out


def run_primed(name: str, prime: bytes, data: bytes) -> BaselineResult:
    """`name` on `data` for a decoder that already knows `prime`: size(prime + data) -
    size(prime), named 'NAME primed'; the joint file is checked to round-trip. Times are of the
    joint file minus the prime alone."""
    pack, _ = _codec(name)
    alone, alone_s = _timed(name, pack, bytes(prime))
    size, packing, unpacking = _round_trip(name, bytes(prime) + bytes(data))
    return BaselineResult(f"{name} primed", len(data), max(0, size - len(alone)),
                          max(0.0, packing - alone_s), unpacking)
