"""The engine's int8 products: float32 BLAS against the compiled `mm8` paths, side by side.

Part 1, one product at a time: microseconds per product of the shapes the default model runs
(64 streams: fast; 256: turbo), numpy's OpenBLAS float32 and every `mm8` path this CPU has
(avx512-vnni, avx512, avx2, scalar), each checked equal to BLAS's exact integers.

Part 2, whole files: `umc` compress and decompress bytes/s per network profile with
`UMOEC_MM8=blas` and with this machine's choice (`kernels.use_mm8`), alternating, one engine
thread, each run in its own process; the two files must be byte-identical and decode back.

Environment: BENCH_PRODUCTS_BYTES (default 100000) sets the text sample of part 2;
BENCH_PRODUCTS_PROFILES (default turbo,fast,balanced) the profiles.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import timeit
from pathlib import Path

import numpy as np

from umoec.engine import kernels

ROOT = Path(__file__).resolve().parents[1]
SHAPES = [(64, 96, 419), (64, 96, 384), (64, 384, 96), (64, 96, 256), (256, 96, 419),
          (256, 384, 96)]
PATHS = ["avx512-vnni", "avx512", "avx2", "scalar"]
UMC = "import sys; from umoec.umc.main import entry; sys.argv = ['umc'] + sys.argv[1:]; " \
      "sys.exit(entry())"


def per_product(repeat: int = 300) -> None:
    saved = os.environ.get("UMOEC_MM8")
    usable = []
    for path in PATHS:
        os.environ["UMOEC_MM8"] = path
        if kernels.mm8_path() == path:
            usable.append(path)
    print(f"{'rows x K x N':>16} {'BLAS us':>9} " + " ".join(f"{p:>12}" for p in usable))
    rng = np.random.default_rng(0)
    try:
        for R, K, N in SHAPES:
            x = rng.integers(-127, 128, (R, K)).astype(np.float32)
            w = rng.integers(-127, 128, (K, N)).astype(np.float32)
            blas = timeit.timeit(lambda x=x, w=w: x @ w, number=repeat) / repeat * 1e6
            cells = []
            for path in usable:
                os.environ["UMOEC_MM8"] = path
                wp = kernels.pack8(w)
                if not (kernels.matmul8(x, w, wp) == x @ w).all():
                    raise SystemExit(f"mm8 {path} differs from BLAS on {R}x{K}x{N}")
                n = max(3, repeat // 20) if path == "scalar" else repeat
                us = timeit.timeit(lambda x=x, w=w, wp=wp: kernels.matmul8(x, w, wp),
                                   number=n) / n * 1e6
                cells.append(f"{us:7.1f} x{blas / us:4.2f}")
            print(f"{f'{R} x {K} x {N}':>16} {blas:9.1f} " + " ".join(f"{c:>12}" for c in cells))
    finally:
        if saved is None:
            os.environ.pop("UMOEC_MM8", None)
        else:
            os.environ["UMOEC_MM8"] = saved


def umc(args: list[str], mm8: str) -> tuple[float, subprocess.CompletedProcess]:
    env = {**os.environ, "UMOEC_ENGINE_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    env.pop("UMOEC_MM8", None)
    if mm8 == "blas":
        env["UMOEC_MM8"] = "blas"
    res = subprocess.run([sys.executable, "-c", UMC, *args], cwd=ROOT, env=env,
                         capture_output=True, timeout=1800)
    if res.returncode != 0:
        raise SystemExit(f"umc {' '.join(args)}: {res.stderr.decode()[-500:]}")
    speed = re.findall(rb"([\d,]+) B/s", res.stderr)
    return float(speed[-1].replace(b",", b"")), res


def whole_files() -> None:
    size = int(os.environ.get("BENCH_PRODUCTS_BYTES", "100000"))
    profiles = os.environ.get("BENCH_PRODUCTS_PROFILES", "turbo,fast,balanced").split(",")
    src = b"".join(p.read_bytes() for p in sorted(Path(ROOT / "umoec").rglob("*.py")))[:size]
    choice = kernels.mm8_path() if kernels.use_mm8() else "blas"
    print(f"\n{size:,} bytes of umoec/ source; this machine uses: {choice}")
    print(f"{'profile':>9} {'products':>12} {'compress B/s':>13} {'decompress B/s':>15}")
    with tempfile.TemporaryDirectory() as tmp:
        raw = Path(tmp) / "in"
        raw.write_bytes(src)
        for profile in profiles:
            files = {}
            for mm8 in ("blas", "auto", "blas", "auto"):
                packed = Path(tmp) / f"{profile}.{mm8}.umc"
                c, _ = umc(["--profile", profile, "-f", "-o", str(packed), str(raw)], mm8)
                d, res = umc(["-d", "-c", "-v", str(packed)], mm8)
                if res.stdout != src:
                    raise SystemExit(f"{profile} ({mm8}): the decoded bytes differ")
                files.setdefault(mm8, packed.read_bytes())
                if files[mm8] != packed.read_bytes() or files.get("blas", files[mm8]) != files[mm8]:
                    raise SystemExit(f"{profile}: the files differ between runs or paths")
                print(f"{profile:>9} {mm8:>12} {c:13,.0f} {d:15,.0f}")


def main() -> None:
    per_product()
    whole_files()


if __name__ == "__main__":
    main()
