"""Strong classical compressors as benchmark peers, each optional: a peer that is not installed is
a skipped column, never a crash.

    ppmd      PPMd variant I, order 16 (PyPI pyppmd)
    zpaq -m5  the zpaq command (Debian zpaq); sizes include its archive overhead (~100 bytes)
    paq9a     Debian python3-paq, through the system Python (its module is not in the venv)
plus the in-process baselines of umoec.codec.baselines (xz -9e, zstd -19, brotli -11, ...).
Every peer's output is checked to round-trip.
"""
from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Callable, Optional


def _ppmd() -> Optional[Callable[[bytes], int]]:
    try:
        import pyppmd
    except ImportError:
        return None

    def run(data: bytes) -> int:
        blob = pyppmd.compress(data, max_order=16, mem_size=256 << 20, variant="I")
        if pyppmd.decompress(blob, max_order=16, mem_size=256 << 20, variant="I") != data:
            raise RuntimeError("ppmd did not round-trip")
        return len(blob)
    return run


def _zpaq() -> Optional[Callable[[bytes], int]]:
    exe = shutil.which("zpaq")
    if exe is None:
        return None

    def run(data: bytes) -> int:
        with tempfile.TemporaryDirectory() as t:
            src, arc, out = Path(t) / "in", Path(t) / "a.zpaq", Path(t) / "out"
            src.write_bytes(data)
            subprocess.run([exe, "add", str(arc), "in", "-m5"], cwd=t, check=True,
                           capture_output=True)
            out.mkdir()
            subprocess.run([exe, "extract", str(arc), "-to", str(out)], cwd=t, check=True,
                           capture_output=True)
            if (out / "in").read_bytes() != data:
                raise RuntimeError("zpaq did not round-trip")
            return arc.stat().st_size
    return run


def _paq9a() -> Optional[Callable[[bytes], int]]:
    py = shutil.which("python3", path="/usr/bin")
    if py is None or subprocess.run([py, "-c", "import paq"], capture_output=True).returncode:
        return None
    code = ("import sys, paq; d = sys.stdin.buffer.read(); c = paq.compress(d); "
            "assert paq.decompress(c) == d; print(len(c))")

    def run(data: bytes) -> int:
        res = subprocess.run([py, "-c", code], input=data, capture_output=True, check=True)
        return int(res.stdout)
    return run


def peers() -> dict[str, Callable[[bytes], int]]:
    """name -> (bytes -> compressed size) for every strong peer installed here."""
    found = {"PPMd -o16": _ppmd(), "zpaq -m5": _zpaq(), "paq9a": _paq9a()}
    return {k: v for k, v in found.items() if v is not None}


def measure(fn: Callable[[bytes], int], data: bytes) -> tuple[int, float]:
    t0 = time.perf_counter()
    size = fn(data)
    return size, time.perf_counter() - t0
