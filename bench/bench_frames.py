"""Frames: throughput with 1 and 2 worker processes side by side, and with a local Dask cluster
of 2 worker processes (`umc --cluster`, when distributed is installed), and the peak memory of
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
from contextlib import contextmanager
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


def _case(name: str, data: bytes, extra: list[str], cwd: Path, ways: list[tuple[str, list]]) -> None:
    """`data` coded each of `ways` (label, umc arguments); the first is the baseline."""
    (cwd / "in").write_bytes(data)
    rows = []
    for i, (label, how) in enumerate(ways):
        out = f"in.{i}.umc"
        c = _run(["-q", "-f", *how, *extra, "in", "-o", out], cwd)
        d = _run(["-q", "-f", "-d", *how, out, "-o", "back"], cwd)
        if (cwd / "back").read_bytes() != data:
            raise SystemExit(f"{name}: round trip failed with {label}")
        if (cwd / out).read_bytes() != (cwd / "in.0.umc").read_bytes():
            raise SystemExit(f"{name}: the output with {label} differs from {ways[0][0]}'s")
        rows.append((label, c, d, (cwd / out).stat().st_size))
    n = len(data)
    for label, c, d, size in rows:
        print(f"{name:24s} {label:>9s} {n / c:14,.0f} {n / d:14,.0f} {units.bpb(size, n):8.3f}")
    for label, c, d, _ in rows[1:]:
        print(f"{name:24s} {label + ' vs 1':>9s} {rows[0][1] / c:13.2f}x {rows[0][2] / d:13.2f}x")


@contextmanager
def _ways():
    """-T 1, -T 2 and, with distributed installed, a local Dask cluster of two processes."""
    ways = [("1", ["-T", "1"]), ("2", ["-T", "2"])]
    try:
        from distributed import LocalCluster
    except ImportError:
        print("(Dask rows skipped: distributed is not installed)")
        yield ways
        return
    import logging
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                      silence_logs=logging.ERROR) as cluster:
        yield ways + [("dask 2", ["--cluster", cluster.scheduler_address])]


def main() -> None:
    mb = int(os.environ.get("BENCH_FRAMES_MB", "24"))
    net_kb = int(os.environ.get("BENCH_FRAMES_NET_KB", "256"))
    sample = b"".join(kinds(200_000).values())
    with tempfile.TemporaryDirectory() as tmp:
        cwd = Path(tmp)
        print(f"{'case':24s} {'workers':>9s} {'compress B/s':>14s} {'decompress B/s':>14s} {'bpb':>8s}")
        with _ways() as ways:
            _case(f"cm, {mb} MiB", (sample * (mb * 2**20 // len(sample) + 1))[:mb * 2**20],
                  ["--profile", "cm"], cwd, ways)
            _case(f"fast, {net_kb} KiB, 64K", (sample * 2)[:net_kb * 1024],
                  ["--profile", "fast", "--frame-size", "64K"], cwd, ways)
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
