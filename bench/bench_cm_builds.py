"""The mixing stage's compiled loop against an earlier build of it, side by side in one process
(the cm profile's speed in docs/compress.md#limits-honest).

The base is umoec/codec/_cm.c (and umoec/_native.h) at git revision BENCH_CM_REV (default
BASE_REV: the build the docs' latest figures compare with), compiled here with setup.py's flags.
Rounds alternate the two builds; each round compresses and decompresses the same bytes with the
cm profile (one process, no network). A build's speed is the median of its rounds and the
median of its ratios to the base's round beside it: paired, since the load of a shared machine
moves both alike. The two must write identical files (a build that codes differently would be
a format change, not a speed-up). Data: BENCH_CM_BYTES (default 300,000) of held-out prose and
Python source (bench_models.kinds), BENCH_CM_ROUNDS rounds (default 6). Needs git and a C
compiler; without them it says so and measures nothing.
"""
from __future__ import annotations

import importlib.util
import os
import shutil
import statistics
import subprocess
import sysconfig
import tempfile
import time
from pathlib import Path

from bench.bench_models import kinds
from umoec.codec import cm
from umoec.compress.api import compress_frame, decompress_frame

ROOT = Path(__file__).resolve().parents[1]
BASE_REV = "69e8085"          # before the written versions were compiled on their own
FLAGS = ["-O3", "-ffp-contract=off", "-fno-fast-math"]   # setup.py's, for the same code


def build_at(rev: str, out: Path, flags: list[str] = FLAGS) -> Path:
    """The _cm module of git revision `rev`, compiled into `out` (with `flags`); RuntimeError says
    why not."""
    cc = (sysconfig.get_config_var("CC") or "cc").split()
    if shutil.which(cc[0]) is None or shutil.which("git") is None:
        raise RuntimeError("needs git and a C compiler")
    src = out / "umoec" / "codec"
    src.mkdir(parents=True, exist_ok=True)
    for path, dest in (("umoec/codec/_cm.c", src / "_cm.c"),
                       ("umoec/_native.h", out / "umoec" / "_native.h")):
        res = subprocess.run(["git", "show", f"{rev}:{path}"], cwd=ROOT, capture_output=True)
        if res.returncode:
            raise RuntimeError(f"git show {rev}:{path}: {res.stderr.decode(errors='replace').strip()}")
        dest.write_bytes(res.stdout)
    so = out / ("_cm" + (sysconfig.get_config_var("EXT_SUFFIX") or ".so"))
    res = subprocess.run([*cc, *flags, "-shared", "-fPIC", f"-I{sysconfig.get_paths()['include']}",
                          str(src / "_cm.c"), "-o", str(so)], capture_output=True, text=True)
    if res.returncode:
        raise RuntimeError(f"compiling {rev}'s _cm.c failed: {res.stderr.strip()[-500:]}")
    return so


def load(so: Path):
    spec = importlib.util.spec_from_file_location("_cm", so)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def compare(data: bytes, builds: dict[str, object], rounds: int) -> dict[str, dict]:
    """name -> {"compress", "decompress": medians in B/s, "paired": (compress, decompress)
    medians of the ratios to the first build's rounds}; the builds alternate."""
    speeds = {name: ([], []) for name in builds}
    files = set()
    before = cm._c
    try:
        for _ in range(rounds):
            for name, module in builds.items():
                cm._c = module
                t = time.perf_counter()
                # version 10, unfiltered: what every build since the bench began codes
                blob = compress_frame(data, None, profile="cm", x86=False, binary=False,
                                      record=0)
                tc = time.perf_counter() - t
                t = time.perf_counter()
                back = decompress_frame(blob, None)
                td = time.perf_counter() - t
                if back != data:
                    raise AssertionError(f"{name}: the round trip changed the bytes")
                files.add(blob)
                speeds[name][0].append(len(data) / tc)
                speeds[name][1].append(len(data) / td)
    finally:
        cm._c = before
    if len(files) != 1:
        raise AssertionError("the builds wrote different files")
    base = speeds[next(iter(builds))]
    return {name: {"compress": statistics.median(c), "decompress": statistics.median(d),
                   "paired": (_paired(c, base[0]), _paired(d, base[1]))}
            for name, (c, d) in speeds.items()}


def _paired(speeds: list[float], base: list[float]) -> float:
    """The median of each round's ratio to the base's round beside it."""
    return statistics.median(a / b for a, b in zip(speeds, base, strict=True))


def main() -> None:
    rev = os.environ.get("BENCH_CM_REV", BASE_REV)
    size = int(os.environ.get("BENCH_CM_BYTES", "300000"))
    rounds = int(os.environ.get("BENCH_CM_ROUNDS", "6"))
    if cm.backend() != "c":
        print("skipped: the compiled mixing stage is not built here")
        return
    with tempfile.TemporaryDirectory() as tmp:
        try:
            base = load(build_at(rev, Path(tmp)))
        except RuntimeError as exc:
            print(f"skipped: {exc}")
            return
        builds = {f"at {rev}": base, "this build": cm._c}
        print(f"cm profile, {size:,} bytes, {rounds} rounds, builds alternating; B/s medians, "
              f"then paired ratios to {rev}")
        samples = kinds(size)
        for kind in ("prose", "python"):
            data = samples.get(kind)
            if not data:
                print(f"{kind}: no held-out files here")
                continue
            for name, row in compare(data, builds, rounds).items():
                print(f"{kind:7s} {name:16s} compress {row['compress']:>9,.0f} decompress "
                      f"{row['decompress']:>9,.0f}   paired {row['paired'][0]:.3f} / {row['paired'][1]:.3f}")


if __name__ == "__main__":
    main()
