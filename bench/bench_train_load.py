"""Training speed on a busy machine: tier1_micro bytes/s, idle and beside a CPU-bound process,
with the thread count fixed to the cores (torch's default) and chosen from the load
(hardware.threads: 0, umoec/train/threads.py), side by side in one run.

Loads: none; a busy-loop process from the start; one that starts 6 s in (the run then has to
notice). Speed: bytes/s over the last 30 of 60 logged steps. Needs a dataset: data/default
(`python -m bin.prepare_data --out data/default`) or $UMOEC_BENCH_DATA. Run with nothing else
on the machine.
"""
from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STEPS, WINDOW = 60, 30
HOGS = {"idle": None, "busy from the start": 0, "busy after 6 s": 6}


def one_run(data: Path, threads: int, hog_delay, tmp: Path) -> tuple[float, list]:
    out = tmp / f"r{threads}-{hog_delay}"
    env = {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}
    hog = None
    if hog_delay is not None:
        hog = subprocess.Popen([sys.executable, "-c",
                                f"import time; time.sleep({hog_delay})\nwhile True: pass"])
    try:
        subprocess.run([sys.executable, "-m", "bin.train", "--config", "configs/tier1_micro.yaml",
                        "--out", str(out), "--quiet", "--set", f"data.path={data}",
                        "--set", f"training.steps={STEPS}", "--set", "training.warmup_steps=5",
                        "--set", "logging.log_every=1", "--set", "logging.eval_every=1000",
                        "--set", "logging.save_every=1000", "--set", f"hardware.threads={threads}"],
                       cwd=ROOT, env=env, check=True, capture_output=True, timeout=900)
    finally:
        if hog is not None:
            hog.kill()
            hog.wait()
    conn = sqlite3.connect(out / "metrics.db")
    rows = conn.execute("SELECT step, elapsed_s FROM train_metrics ORDER BY step").fetchall()
    events = [m for (m,) in conn.execute("SELECT message FROM run_events WHERE kind='threads'")]
    conn.close()
    (s0, e0), (s1, e1) = rows[-WINDOW - 1], rows[-1]
    shutil.rmtree(out, ignore_errors=True)
    return (s1 - s0) * 16 * 256 / (e1 - e0), events


def main() -> None:
    data = Path(os.environ.get("UMOEC_BENCH_DATA", ROOT / "data" / "default"))
    if not (data / "dataset.json").is_file():
        print(f"skipped: no dataset at {data} (python -m bin.prepare_data --out {data})")
        return
    cores = len(os.sched_getaffinity(0))
    print(f"tier1_micro, {cores} cores, bytes/s over the last {WINDOW} of {STEPS} steps")
    print(f"{'load':22s} {'fixed ' + str(cores) + ' threads':>16s} {'auto':>10s}  auto/idle")
    with tempfile.TemporaryDirectory() as tmp:
        idle = None
        for name, delay in HOGS.items():
            fixed, _ = one_run(data, cores, delay, Path(tmp))
            auto, events = one_run(data, 0, delay, Path(tmp))
            idle = idle or auto
            print(f"{name:22s} {fixed:16,.0f} {auto:10,.0f}  {auto / idle:8.0%}"
                  + (f"   ({'; '.join(events)})" if events else ""), flush=True)


if __name__ == "__main__":
    main()
