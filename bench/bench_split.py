"""A profile's streams in one process against two (umoec/engine/split.py), side by side.

`umc --profile P -T 1` and `-T 2`, compress then decompress, alternating, each run in its own
process with the shipped default model; every file must be byte-identical whatever the process
count and decode back. Prints bytes/s per run and the median ratio two processes / one.
Run it with nothing else on the machine: the second process needs the second core.

Environment: BENCH_SPLIT_BYTES (default 200000) bytes of the standard library's `email`
package, BENCH_SPLIT_ROUNDS (default 3) pairs of runs, BENCH_SPLIT_PROFILES (default
turbo,fast; balanced splits too since its 16 streams are enough). BENCH_SPLIT_BASE: the
root of another checkout (its extensions built): then that build's `-T 2` against this one's,
alternating, the ratio this / base (a speed change must leave the files as they were: checked).
"""
from __future__ import annotations

import os
import re
import statistics
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
UMC = "import sys; from umoec.umc.main import entry; sys.argv = ['umc'] + sys.argv[1:]; " \
      "sys.exit(entry())"


def sample(size: int) -> bytes:
    """`size` bytes of the standard library's email package (present on every machine)."""
    src = Path(sysconfig.get_paths()["stdlib"]) / "email"
    data = b"".join(p.read_bytes() for p in sorted(src.rglob("*.py")))
    return (data * (size // max(1, len(data)) + 1))[:size]


def umc(args: list[str], root: Path = ROOT) -> tuple[float, bytes]:
    """`umc args` of the checkout at `root` (python -c imports from its working directory)."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("UMOEC_ENGINE_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                        "PYTHONPATH")}
    res = subprocess.run([sys.executable, "-c", UMC, *args], cwd=root, env=env,
                         capture_output=True, timeout=1800)
    if res.returncode != 0:
        raise SystemExit(f"umc {' '.join(args)}: {res.stderr.decode()[-500:]}")
    speed = re.findall(rb"([\d,]+) B/s", res.stderr)
    return float(speed[-1].replace(b",", b"")), res.stdout


def main() -> None:
    size = int(os.environ.get("BENCH_SPLIT_BYTES", "200000"))
    rounds = int(os.environ.get("BENCH_SPLIT_ROUNDS", "3"))
    data = sample(size)
    print(f"{size:,} bytes of the email package, {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory() as tmp:
        raw = Path(tmp) / "in"
        raw.write_bytes(data)
        for profile in os.environ.get("BENCH_SPLIT_PROFILES", "turbo,fast").split(","):
            side_by_side(profile, raw, data, rounds)


def sides() -> list[tuple[str, Path, int]]:
    """(label, checkout, processes) of the two sides compared: one process against two, or with
    BENCH_SPLIT_BASE another checkout's two processes against this one's."""
    base = os.environ.get("BENCH_SPLIT_BASE")
    if base:
        return [("base", Path(base).resolve(), 2), ("this", ROOT, 2)]
    return [("1", ROOT, 1), ("2", ROOT, 2)]


def side_by_side(profile: str, raw: Path, data: bytes, rounds: int) -> None:
    compared = sides()
    print(f"\n{'profile':>9} {'processes':>10} {'compress B/s':>13} {'decompress B/s':>15}")
    speeds: list[list[tuple[float, float]]] = [[], []]
    first = None
    for _ in range(rounds):
        for i, (label, root, n) in enumerate(compared):
            packed = raw.with_name(f"{profile}.{i}.umc")
            c, _ = umc(["--profile", profile, "-T", str(n), "-f", "-o", str(packed), str(raw)], root)
            d, out = umc(["-d", "-T", str(n), "-c", "-v", str(packed)], root)
            if out != data:
                raise SystemExit(f"{profile}, {label}: the decoded bytes differ")
            first = first or packed.read_bytes()
            if packed.read_bytes() != first:
                raise SystemExit(f"{profile}, {label}: the file differs from the first run's")
            speeds[i].append((c, d))
            print(f"{profile:>9} {label:>10} {c:13,.0f} {d:15,.0f}")
    name = "this / base" if compared[0][0] == "base" else "two processes / one"
    for k, what in enumerate(("compress", "decompress")):
        ratios = [b[k] / a[k] for a, b in zip(*speeds, strict=True)]
        print(f"{profile} {what}: {name} = {statistics.median(ratios):.2f} (median of {rounds} "
              f"pairs, {sum(r > 1 for r in ratios)} faster)")


if __name__ == "__main__":
    main()
