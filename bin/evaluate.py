"""python -m bin.evaluate [--run RUNDIR] [--checkpoint CKPT] [--data FILE] [--max-bytes N] [--profile P]

Compresses and decompresses evaluation bytes with a checkpoint, checks the round trip (sha256),
reports bpb next to gzip/xz/zstd/brotli and the strong peers installed here (PPMd, zpaq, bzip3,
paq9a) on the same bytes, plus xz/PPMd/zpaq primed with the run's own training data, and writes
eval_results (and eval_baselines) rows into the run's metrics.db. scripts/eval_enwik8.sh calls this.
Data: --data, else enwik8 ($ENWIK8 or data/enwik8), else the run's validation split.
Exit 0 when the round trip passes, 1 when it fails, 2 on bad input.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from umoec.cli import EXIT_FAILURE, UserError, run_main
from umoec.compress.profiles import PROFILES
from umoec.compress.threads import prepare
from umoec.progress import ProgressBar
from umoec.run import RunDir
from umoec.run.layout import list_runs

ROOT = Path(__file__).resolve().parents[1]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m bin.evaluate", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--run", type=Path, help="run folder (default: the newest trained run in runs/)")
    p.add_argument("--checkpoint", type=Path, help="default: the run's newest checkpoint")
    p.add_argument("--data", type=Path, help="file to evaluate on (e.g. enwik8)")
    p.add_argument("--max-bytes", type=int, default=100_000,
                   help="evaluate the first N bytes (0 = all; default 100,000 keeps CPU runs short)")
    p.add_argument("--profile", choices=sorted(PROFILES), default="turbo")
    p.add_argument("--prime-bytes", type=int, default=1_000_000,
                   help="prime the primed baselines with the last N bytes of the run's "
                        "training split (0 = no primed baselines; default 1,000,000)")
    p.add_argument("--debug", action="store_true")
    a = p.parse_args(argv)
    if a.max_bytes < 0 or a.prime_bytes < 0:
        raise UserError("--max-bytes and --prime-bytes must be >= 0")
    run = RunDir(a.run) if a.run else next(
        (r for r in list_runs(ROOT / "runs") if (s := r.read_status()) and s.kind == "train"), None)
    if run is None or not run.exists():
        raise UserError("no run to evaluate: pass --run RUNDIR (a folder made by bin.train)")
    ckpt = a.checkpoint or (run.latest_checkpoint().path if run.latest_checkpoint() else None)
    if ckpt is None:
        raise UserError(f"{run.root} has no checkpoint yet; pass --checkpoint")
    prepare(PROFILES[a.profile].threads)  # before numpy loads (compress/threads.py)
    from umoec.compress.evaluate import evaluate, find_data, render, training_prime
    data, dataset, note = find_data(a.data, run, ROOT)
    prime, prime_label = training_prime(run, ROOT, a.prime_bytes) if a.prime_bytes else (b"", "")
    if a.prime_bytes and not prime:
        note = (note + " " if note else "") + prime_label
    bars = {}

    def progress(stage, done, total):
        bars.setdefault(stage, ProgressBar(stage))(done, total)
    report = evaluate(run, Path(ckpt), data, dataset, profile=a.profile, max_bytes=a.max_bytes,
                      progress=progress, note=note, prime=prime, prime_label=prime_label)
    for bar in bars.values():
        bar.close()
    print(render(report))
    return 0 if report.roundtrip_ok else EXIT_FAILURE


if __name__ == "__main__":
    sys.exit(run_main(main, "evaluate"))
