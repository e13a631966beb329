"""TrainingDB: the one writer of a run's metrics.db (trainer, simulator, codec jobs).

SQLite in WAL mode so the cockpit reads while a run writes; a busy timeout instead of
"database is locked"; parameterised SQL only. Rows for one step go in one transaction
(`with db.batch(): ...`), so a reader never sees half a step and a killed writer loses at most
the step it was writing.
"""
from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from .schema import STEP_TABLES, migrate

BUSY_TIMEOUT_MS = 10_000


def connect(path: str | os.PathLike, *, readonly: bool = False) -> sqlite3.Connection:
    """An autocommit connection with WAL, busy timeout and foreign keys; `readonly` never writes.

    A read-only connection to a missing file raises FileNotFoundError instead of creating it.
    """
    path = Path(path)
    if readonly:
        if not path.is_file():
            raise FileNotFoundError(f"no metrics database at {path}")
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True,
                               isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000,
                               check_same_thread=False)
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(path, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000,
                               check_same_thread=False)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    return conn


class TrainingDB:
    """Open (creating or upgrading) a metrics database and write rows to it."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        self.conn = connect(self.path)
        migrate(self.conn)
        self._depth = 0

    # -- lifecycle ---------------------------------------------------------------------------
    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    def __enter__(self) -> TrainingDB:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Group writes into one transaction (nesting joins the outer one)."""
        if self._depth:
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
            return
        self.conn.execute("BEGIN IMMEDIATE")
        self._depth = 1
        try:
            yield
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        else:
            self.conn.execute("COMMIT")
        finally:
            self._depth = 0

    def _many(self, sql: str, rows: Iterable[Sequence]) -> None:
        with self.batch():
            self.conn.executemany(sql, rows)

    # -- training ----------------------------------------------------------------------------
    def insert_train_metrics(self, step: int, *, loss: float, bpb: float, lr: float,
                             grad_norm: float, tokens_per_sec: float, bytes_seen: int,
                             elapsed_s: float, ts: float | None = None) -> None:
        self._many("INSERT OR REPLACE INTO train_metrics VALUES (?,?,?,?,?,?,?,?,?)",
                   [(step, ts or time.time(), elapsed_s, loss, bpb, lr, grad_norm,
                     tokens_per_sec, bytes_seen)])

    def insert_system_metrics(self, step: int, *, cpu_percent=None, rss_bytes=None,
                              disk_free_bytes=None, gpu_util=None, gpu_mem_bytes=None,
                              ts: float | None = None) -> None:
        self._many("INSERT OR REPLACE INTO system_metrics VALUES (?,?,?,?,?,?,?)",
                   [(step, ts or time.time(), cpu_percent, rss_bytes, disk_free_bytes, gpu_util,
                     gpu_mem_bytes)])

    def insert_head_losses(self, step: int, losses: Mapping[str, float]) -> None:
        self._many("INSERT OR REPLACE INTO head_losses VALUES (?,?,?)",
                   [(step, head, float(v)) for head, v in losses.items()])

    def insert_val(self, step: int, *, loss: float, bpb: float, n_bytes: int,
                   ts: float | None = None) -> None:
        self._many("INSERT OR REPLACE INTO val_metrics VALUES (?,?,?,?,?)",
                   [(step, ts or time.time(), loss, bpb, n_bytes)])

    def insert_routing(self, step: int, loads: Sequence[Sequence[float]],
                       biases: Sequence[Sequence[float]], block_ids: Sequence[int]) -> None:
        """loads/biases: one row per MoE block (block index from `block_ids`), one column per expert."""
        rows = [(step, int(b), e, float(load), float(bias))
                for b, lrow, brow in zip(block_ids, loads, biases, strict=True)
                for e, (load, bias) in enumerate(zip(lrow, brow, strict=True))]
        self._many("INSERT OR REPLACE INTO moe_routing VALUES (?,?,?,?,?)", rows)

    def insert_mod_gates(self, step: int, fractions: Mapping[int, float], capacity: float,
                         inference: Mapping[int, float] | None = None) -> None:
        inference = inference or {}
        rows = [(step, int(b), float(f), float(capacity), inference.get(b))
                for b, f in fractions.items()]
        self._many("INSERT OR REPLACE INTO mod_gates (step, block_idx, fraction_processed, "
                   "capacity, fraction_inference) VALUES (?,?,?,?,?)", rows)

    def insert_activation_stat(self, step: int, block_idx: int, *, mean: float, std: float,
                               p1: float, p25: float, p50: float, p75: float,
                               p99: float) -> None:
        self._many("INSERT OR REPLACE INTO activation_stats VALUES (?,?,?,?,?,?,?,?,?)",
                   [(step, block_idx, mean, std, p1, p25, p50, p75, p99)])

    def insert_hidden_state(self, step: int, block_idx: int, sample_idx: int, pc1: float,
                            pc2: float) -> None:
        self.insert_hidden_states(step, block_idx, [(pc1, pc2)], start=sample_idx)

    def insert_hidden_states(self, step: int, block_idx: int,
                             points: Iterable[Sequence[float]], start: int = 0) -> None:
        """Many (pc1, pc2) points of one block, numbered from `start`."""
        self._many("INSERT OR REPLACE INTO hidden_states VALUES (?,?,?,?,?)",
                   [(step, block_idx, start + i, float(p[0]), float(p[1]))
                    for i, p in enumerate(points)])

    def insert_event(self, kind: str, message: str = "", step: int | None = None,
                     ts: float | None = None) -> None:
        self._many("INSERT INTO run_events (ts, step, kind, message) VALUES (?,?,?,?)",
                   [(ts or time.time(), step, kind, message)])

    def discard_after(self, step: int) -> None:
        """Drop step rows newer than `step` (a resumed run rewrites them from its checkpoint)."""
        with self.batch():
            for table in STEP_TABLES:
                self.conn.execute(f"DELETE FROM {table} WHERE step > ?", (step,))  # table: constant

    # -- evaluation and compression ----------------------------------------------------------
    def insert_eval_result(self, step: int, dataset: str, *, bpb: float, compressed_bytes: int,
                           original_bytes: int, roundtrip_ok: bool,
                           ts: float | None = None) -> None:
        self._many("INSERT OR REPLACE INTO eval_results VALUES (?,?,?,?,?,?,?)",
                   [(step, ts or time.time(), dataset, bpb, compressed_bytes, original_bytes,
                     int(bool(roundtrip_ok)))])

    def insert_eval_baseline(self, step: int, dataset: str, method: str, *,
                             compressed_bytes: int, original_bytes: int, seconds: float) -> None:
        self._many("INSERT OR REPLACE INTO eval_baselines VALUES (?,?,?,?,?,?)",
                   [(step, dataset, method, compressed_bytes, original_bytes, seconds)])

    def start_compression_job(self, input_path: str, output_path: str, profile: str,
                              checkpoint: str, ts: float | None = None) -> int:
        with self.batch():
            cur = self.conn.execute(
                "INSERT INTO compression_jobs (ts, input_path, output_path, profile, checkpoint, "
                "status) VALUES (?,?,?,?,?,?)",
                (ts or time.time(), input_path, output_path, profile, checkpoint, "running"))
            return int(cur.lastrowid)

    def finish_compression_job(self, job_id: int, status: str, *, raw_bytes: int | None = None,
                               compressed_bytes: int | None = None,
                               elapsed_s: float | None = None,
                               profile: str | None = None) -> None:
        """`profile`: what the job turned out to use, when it differs from what was asked
        (auto records "auto: cm")."""
        with self.batch():
            self.conn.execute("UPDATE compression_jobs SET status=?, raw_bytes=?, "
                              "compressed_bytes=?, elapsed_s=?, profile=COALESCE(?, profile) "
                              "WHERE job_id=?",
                              (status, raw_bytes, compressed_bytes, elapsed_s, profile, job_id))
