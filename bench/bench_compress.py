"""The compressor's headline, float path and exact engine side by side: train tier1_micro for a
fixed CPU budget (or take a checkpoint), then compress held-out bytes of the default corpus with
every profile twice, once with the model's float step form in torch (the engine of format 1,
which only decodes on the machine and thread count that wrote it) and once with the exact
integer engine (format 2: decodes anywhere), next to gzip -9, xz -9e, zstd -19/-22, brotli -11.

Environment knobs: BENCH_TRAIN_SECONDS (default 600), BENCH_EVAL_BYTES (default 100000),
BENCH_CHECKPOINT (skip training and use this checkpoint), BENCH_DATA (dataset folder; default:
built from the standard library into a temp folder), BENCH_COOLDOWN (seconds of rest between
training and measuring, default 120: the reference VM's cores run slower for a minute or two
after ten minutes of full load). Prints one table; numbers, not pass/fail. Run it with nothing
else on the machine: both paths are timed in the same process, one after the other.
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from umoec import units
from umoec.codec import CodecSettings, compress, decompress
from umoec.codec.baselines import run_baselines
from umoec.compress.api import compress_bytes, decompress_bytes, export_for
from umoec.compress.profiles import PROFILES
from umoec.data import prepare

ROOT = Path(__file__).resolve().parents[1]


def train_tier1(tmp: Path, data: Path, seconds: float) -> Path:
    """tier1_micro trained on `data` for `seconds` (time budget) in tmp/run: its last checkpoint."""
    out = tmp / "run"
    cmd = [sys.executable, "-m", "bin.train", "--config", "configs/tier1_micro.yaml", "--out",
           str(out), "--quiet", "--time-budget", str(seconds), "--set", f"data.path={data}",
           "--set", "training.steps=1000000", "--set", "logging.eval_every=1000000",
           "--set", "logging.save_every=1000000"]
    subprocess.run(cmd, cwd=ROOT, check=True)
    return sorted((out / "checkpoints").glob("step*.pt"))[-1]


def float_path(ckpt: Path, raw: bytes, profile: str, threads: int) -> tuple[int, float, float, bool]:
    """The former coding path: the torch model's fp32 step form (LoRA adaptation in balanced, as
    it was). -> (bytes, compress s, decompress s, round trip ok)."""
    from dataclasses import replace

    import torch

    from umoec.compress.neural import build_predictor, globals_for, load_model
    # format 1's profiles: LoRA adaptation in balanced only (fast had none)
    prof = replace(PROFILES[profile], adapt_rate=1 if profile == "balanced" else 0)
    torch.set_num_threads(threads)
    loaded = load_model(ckpt, prof)
    g = globals_for(raw, loaded.cfg)
    lora = loaded.cfg.lora
    settings = CodecSettings.from_config(loaded.cfg, streams=prof.streams_for(len(raw)),
                                         profile=profile,
                                         adapt_every=lora.trigger_bytes if lora.enabled else 0)
    t0 = time.perf_counter()
    blob = compress(raw, build_predictor(loaded, g, threads), settings)
    t1 = time.perf_counter()
    back = decompress(blob, build_predictor(load_model(ckpt, prof), g, threads))
    t2 = time.perf_counter()
    return len(blob), t1 - t0, t2 - t1, back == raw


def exact_path(model, raw: bytes, profile: str) -> tuple[int, float, float, bool]:
    t0 = time.perf_counter()
    blob = compress_bytes(raw, model, profile=profile)
    t1 = time.perf_counter()
    back = decompress_bytes(blob, model)
    t2 = time.perf_counter()
    return len(blob), t1 - t0, t2 - t1, back == raw


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
            ckpt = train_tier1(tmp, data, seconds)
            rest = float(os.environ.get("BENCH_COOLDOWN", "120"))
            print(f"resting {rest:g} s after training before measuring (BENCH_COOLDOWN)", flush=True)
            time.sleep(rest)
        raw = (data / "val.bin").read_bytes()[:n_eval]
        model = export_for(ckpt)
        print(f"checkpoint {ckpt.name} (coding model {model.label()}); held-out bytes: "
              f"{len(raw):,} from {data}/val.bin")
        print(f"{'method':36s} {'bpb':>7s} {'compress B/s':>13s} {'decompress B/s':>15s} "
              f"{'round trip':>10s}")
        threads = int(os.environ.get("OPENBLAS_NUM_THREADS", "1"))
        print(f"threads: {threads} (torch for the float path; BLAS and the SSM mixer for the "
              "exact engine; set OPENBLAS_NUM_THREADS before starting)")
        exact_path(model, raw[:2000], "turbo")          # untimed warm-up: imports and tables
        float_path(ckpt, raw[:2000], "turbo", threads)
        for name in PROFILES:
            for label, run in (("float (format 1)",
                                lambda n=name: float_path(ckpt, raw, n, threads)),
                               ("exact (format 2)", lambda n=name: exact_path(model, raw, n))):
                size, tc, td, ok = run()
                print(f"{name + ', ' + label:36s} {units.bpb(size, len(raw)):7.3f} {len(raw) / tc:13,.0f} "
                      f"{len(raw) / td:15,.0f} {'PASS' if ok else 'FAIL':>10s}", flush=True)
        for b in run_baselines(raw):
            print(f"{b.name:36s} {b.bpb:7.3f} {b.compress_bytes_per_s:13,.0f} "
                  f"{b.decompress_bytes_per_s:15,.0f} {'PASS':>10s}")


if __name__ == "__main__":
    main()
