"""Frames: throughput with 1 and 2 worker processes side by side, and the peak memory of
compressing and decompressing a file much larger than a frame (docs/compress.md#frames).

Each run is a `umc` process (as a user runs it), timed from outside; peak RSS is the largest
resident size of one such process (measured by a parent of its own), for an input of one frame
and for a larger one: bounded memory shows as the same peak. Data: the shipped default model's
general corpus files, repeated to BENCH_FRAMES_MB MiB (default 24) for the cm profile,
BENCH_FRAMES_NET_KB KiB (default 256, with --frame-size 64K) for the fast profile. Run with
nothing else on the machine.
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.bench_models import kinds
from umoec import units

UMC = [sys.executable, "-m", "umoec.umc.main"]


def _run(args: list[str], cwd: Path) -> float:
    t0 = time.perf_counter()
    res = subprocess.run([*UMC, *args], cwd=cwd, capture_output=True, text=True)
    dt = time.perf_counter() - t0
    if res.returncode:
        raise SystemExit(f"umc {' '.join(args)} failed: {res.stderr.strip()}")
    return dt


def _case(name: str, data: bytes, extra: list[str], cwd: Path) -> None:
    (cwd / "in").write_bytes(data)
    rows = []
    for workers in (1, 2):
        out = f"in.{workers}.umc"
        c = _run(["-q", "-f", "-T", str(workers), *extra, "in", "-o", out], cwd)
        d = _run(["-q", "-f", "-d", "-T", str(workers), out, "-o", "back"], cwd)
        if (cwd / "back").read_bytes() != data:
            raise SystemExit(f"{name}: round trip failed with {workers} workers")
        rows.append((workers, c, d, (cwd / out).stat().st_size))
    if rows[0][3] != rows[1][3] or (cwd / "in.1.umc").read_bytes() != (cwd / "in.2.umc").read_bytes():
        raise SystemExit(f"{name}: the output depends on the number of workers")
    n = len(data)
    for workers, c, d, size in rows:
        print(f"{name:24s} {workers:>7d} {n / c:14,.0f} {n / d:14,.0f} {units.bpb(size, n):8.3f}")
    print(f"{name:24s} {'2 vs 1':>7s} {rows[0][1] / rows[1][1]:13.2f}x {rows[0][2] / rows[1][2]:13.2f}x")


def main() -> None:
    mb = int(os.environ.get("BENCH_FRAMES_MB", "24"))
    net_kb = int(os.environ.get("BENCH_FRAMES_NET_KB", "256"))
    sample = b"".join(kinds(200_000).values())
    with tempfile.TemporaryDirectory() as tmp:
        cwd = Path(tmp)
        print(f"{'case':24s} {'workers':>7s} {'compress B/s':>14s} {'decompress B/s':>14s} {'bpb':>8s}")
        _case(f"cm, {mb} MiB", (sample * (mb * 2**20 // len(sample) + 1))[:mb * 2**20],
              ["--profile", "cm"], cwd)
        _case(f"fast, {net_kb} KiB, 64K", (sample * 2)[:net_kb * 1024],
              ["--profile", "fast", "--frame-size", "64K"], cwd)
        # peak memory, a fresh process each: one frame's worth of input, then mb MiB
        for size in (8 << 20, mb << 20):
            (cwd / "in").write_bytes((sample * (size // len(sample) + 1))[:size])
            peaks = [_peak(["-q", "-f", "--profile", "cm", "-T", "1", "in", "-o", "p.umc"], cwd),
                     _peak(["-q", "-f", "-d", "-T", "1", "p.umc", "-o", "back"], cwd)]
            print(f"peak RSS, cm, 1 worker, {size >> 20} MiB input: compress {peaks[0]} MiB, "
                  f"decompress {peaks[1]} MiB")


def _peak(args: list[str], cwd: Path) -> int:
    """The peak resident MiB of one umc process (measured by a parent of its own)."""
    code = ("import resource, subprocess; "
            f"subprocess.run({UMC + args!r}, cwd={str(cwd)!r}, check=True); "
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024)")
    return int(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              check=True).stdout)


if __name__ == "__main__":
    main()
