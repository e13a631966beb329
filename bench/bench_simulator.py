"""Simulator and metrics-writer throughput, side by side with a raw-SQLite baseline.

Prints: wall time of `bin.simulate_training --steps 5000` (in-process), rows written per second,
and the same number of rows bulk-inserted by plain sqlite3 executemany in one transaction.
The ratio shows what per-step transactions and realism cost over the fastest possible insert.
"""
from __future__ import annotations

import sqlite3
import tempfile
import time
from pathlib import Path

from umoec import config as C
from umoec.run import RunDir
from umoec.sim.simulator import SimOptions, Simulator

TABLES = ("train_metrics", "head_losses", "val_metrics", "moe_routing", "mod_gates",
          "activation_stats", "hidden_states", "eval_results", "compression_jobs", "run_events")


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        cfg = C.load_preset("tier1_micro", ["training.steps=5000"])
        run = RunDir(Path(tmp) / "sim")
        t0 = time.perf_counter()
        Simulator(run, cfg, SimOptions()).run_all()
        sim_s = time.perf_counter() - t0
        conn = sqlite3.connect(run.db_path)
        rows = sum(conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in TABLES)
        conn.close()

        base = sqlite3.connect(Path(tmp) / "base.db")
        base.execute("CREATE TABLE t (a INTEGER, b INTEGER, c INTEGER, d REAL, e REAL, "
                     "PRIMARY KEY (a, b, c))")
        data = [(i // 1000, (i // 10) % 100, i % 10, 0.5, 0.25) for i in range(rows)]
        t0 = time.perf_counter()
        with base:
            base.executemany("INSERT INTO t VALUES (?,?,?,?,?)", data)
        base_s = time.perf_counter() - t0
        base.close()
    print(f"{'what':44s} {'seconds':>9s} {'rows/s':>12s}")
    print(f"{'simulate_training --steps 5000 (all tables)':44s} {sim_s:9.2f} {rows / sim_s:12,.0f}")
    print(f"{'baseline: one executemany, same row count':44s} {base_s:9.2f} {rows / base_s:12,.0f}")
    print(f"rows written: {rows:,}; simulator / baseline time ratio: {sim_s / base_s:.1f}x")


if __name__ == "__main__":
    main()
