"""The product's headline: train tier1_micro for a fixed CPU budget, then compress held-out bytes
of the default corpus with every profile (and fast/balanced with the match model off, to show
what it adds), next to gzip -9, xz -9e, zstd -19/-22 and brotli -11.

Environment knobs: BENCH_TRAIN_SECONDS (default 600), BENCH_EVAL_BYTES (default 100000),
BENCH_CHECKPOINT (skip training and use this checkpoint), BENCH_DATA (dataset folder; default:
built from the standard library into a temp folder), BENCH_COOLDOWN (seconds of rest between
training and measuring, default 120: on the reference VM the cores run slower for a minute or
two after ten minutes of full load; turbo measured 26-28k B/s right after the training and
30-31k a minute later). Prints one table; numbers, not pass/fail.
"""
from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from umoec import config as C
from umoec.codec.baselines import run_baselines
from umoec.compress.api import compress_path, decompress_path
from umoec.compress.profiles import PROFILES
from umoec.data import prepare
from umoec.train.checkpoint import checkpoint_config, load

ROOT = Path(__file__).resolve().parents[1]


def _train(tmp: Path, data: Path, seconds: float) -> Path:
    out = tmp / "run"
    cmd = [sys.executable, "-m", "bin.train", "--config", "configs/tier1_micro.yaml", "--out",
           str(out), "--quiet", "--time-budget", str(seconds), "--set", f"data.path={data}",
           "--set", "training.steps=1000000", "--set", "logging.eval_every=1000000",
           "--set", "logging.save_every=1000000"]
    subprocess.run(cmd, cwd=ROOT, check=True)
    ckpts = sorted((out / "checkpoints").glob("step*.pt"))
    return ckpts[-1]


def _without_match(ckpt: Path) -> C.Config:
    """The checkpoint's own config with the match model off (entropy.match_min_len=0)."""
    base = checkpoint_config(load(ckpt), str(ckpt))
    return C.build(C.apply_overrides(C.to_dict(base), ["entropy.match_min_len=0"]), "bench")


def main() -> None:
    seconds = float(os.environ.get("BENCH_TRAIN_SECONDS", "600"))
    n_eval = int(os.environ.get("BENCH_EVAL_BYTES", "100000"))
    with tempfile.TemporaryDirectory(prefix="bench-compress-") as t:
        tmp = Path(t)
        data = Path(os.environ["BENCH_DATA"]) if os.environ.get("BENCH_DATA") else tmp / "data"
        if not (data / "val.bin").exists():
            prepare(data)
        if os.environ.get("BENCH_CHECKPOINT"):
            ckpt = Path(os.environ["BENCH_CHECKPOINT"])
        else:
            ckpt = _train(tmp, data, seconds)
            rest = float(os.environ.get("BENCH_COOLDOWN", "120"))
            print(f"resting {rest:g} s after training before measuring (BENCH_COOLDOWN)", flush=True)
            time.sleep(rest)
        raw = (data / "val.bin").read_bytes()[:n_eval]
        src = tmp / "heldout.bin"
        src.write_bytes(raw)
        print(f"checkpoint {ckpt.name}; held-out bytes: {len(raw):,} from {data}/val.bin "
              f"(training budget {seconds:g} s unless BENCH_CHECKPOINT)")
        print(f"{'method':34s} {'bpb':>7s} {'compress B/s':>14s} {'decompress B/s':>15s} {'roundtrip':>9s}")
        no_match = _without_match(ckpt)
        # one small untimed round trip first: the first call pays one-time imports (~1 s)
        warm = tmp / "warm.bin"
        warm.write_bytes(raw[:2000])
        compress_path(warm, tmp / "warm.umc", ckpt, profile="turbo")
        decompress_path(tmp / "warm.umc", tmp / "warm.out", ckpt)
        runs = [(name, name, None) for name in PROFILES] + [("fast", "fast, match off", no_match),
                                                           ("balanced", "balanced, match off", no_match)]
        for name, label, cfg in runs:
            umc, back = tmp / f"{label}.umc", tmp / f"{label}.out"
            t0 = time.perf_counter()
            res = compress_path(src, umc, ckpt, profile=name, config=cfg)
            t1 = time.perf_counter()
            decompress_path(umc, back, ckpt)
            t2 = time.perf_counter()
            ok = hashlib.sha256(back.read_bytes()).digest() == hashlib.sha256(raw).digest()
            print(f"{'u-moec-tiny ' + label:34s} {res.stats.bpb:7.3f} {len(raw) / (t1 - t0):14,.0f} "
                  f"{len(raw) / (t2 - t1):15,.0f} {'PASS' if ok else 'FAIL':>9s}  "
                  f"({PROFILES[name].streams} streams, {res.threads} thread"
                  f"{'s' if res.threads > 1 else ''})")
        for b in run_baselines(raw):
            print(f"{b.name:34s} {b.bpb:7.3f} {b.compress_bytes_per_s:14,.0f} "
                  f"{b.decompress_bytes_per_s:15,.0f} {'PASS':>9s}")


if __name__ == "__main__":
    main()
