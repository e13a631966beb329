"""The metrics database schema, in one place, with its migrations.

`PRAGMA user_version` holds the schema version. Opening a database runs every migration above
its version in order, each in its own transaction, so an older run's metrics.db is upgraded in
place and keeps its rows. Append a migration to change the schema; never edit a shipped one.

Tables (one row per logged step unless noted):
  train_metrics    step, ts, elapsed_s, loss (nats/byte, final head), bpb, lr, grad_norm,
                   tokens_per_sec (bytes/s), bytes_seen
  head_losses      step, head ('final', 'exit_<block>', 'mtp_<k>', 'cascade'), loss (nats/byte)
  val_metrics      step, ts, loss, bpb, n_bytes (every eval_every)
  moe_routing      step, block_idx, expert_idx, load (fraction of routed slots), bias
  mod_gates        step, block_idx, fraction_processed, capacity, fraction_inference
  run_events       event_id, ts, step, kind (start|resume|checkpoint|eval|stop|crash|done), message
  activation_stats, hidden_states, eval_results, compression_jobs: columns and keys exactly as the
                   GUI specification has them (docs/spec_map.md), pinned by
                   tests/umoec/metrics/test_schema.py.
  eval_baselines   step, dataset, method ('gzip -9', 'xz -9e', ...), compressed_bytes,
                   original_bytes, seconds: classical compressors on the same bytes as an eval
  system_metrics   step, ts, cpu_percent (% of one core), rss_bytes, disk_free_bytes, gpu_util
                   (%), gpu_mem_bytes; NULL where not measured (umoec/metrics/system.py)
"""
from __future__ import annotations

import sqlite3

MIGRATIONS: list[tuple[str, list[str]]] = [
    ("base training tables", [
        """CREATE TABLE IF NOT EXISTS train_metrics (
            step INTEGER PRIMARY KEY, ts REAL, elapsed_s REAL, loss REAL, bpb REAL, lr REAL,
            grad_norm REAL, tokens_per_sec REAL, bytes_seen INTEGER)""",
        """CREATE TABLE IF NOT EXISTS head_losses (
            step INTEGER, head TEXT, loss REAL, PRIMARY KEY (step, head))""",
        """CREATE TABLE IF NOT EXISTS val_metrics (
            step INTEGER PRIMARY KEY, ts REAL, loss REAL, bpb REAL, n_bytes INTEGER)""",
        """CREATE TABLE IF NOT EXISTS moe_routing (
            step INTEGER, block_idx INTEGER, expert_idx INTEGER, load REAL, bias REAL,
            PRIMARY KEY (step, block_idx, expert_idx))""",
        """CREATE INDEX IF NOT EXISTS moe_routing_by_expert
            ON moe_routing (block_idx, expert_idx, step)""",
        """CREATE TABLE IF NOT EXISTS mod_gates (
            step INTEGER, block_idx INTEGER, fraction_processed REAL, capacity REAL,
            PRIMARY KEY (step, block_idx))""",
        """CREATE TABLE IF NOT EXISTS run_events (
            event_id INTEGER PRIMARY KEY AUTOINCREMENT, ts REAL, step INTEGER, kind TEXT,
            message TEXT)""",
    ]),
    ("activation, hidden-state, evaluation and compression tables", [
        """CREATE TABLE IF NOT EXISTS activation_stats (
            step INTEGER, block_idx INTEGER,
            mean REAL, std REAL,
            p1 REAL, p25 REAL, p50 REAL, p75 REAL, p99 REAL,
            PRIMARY KEY (step, block_idx))""",
        """CREATE TABLE IF NOT EXISTS hidden_states (
            step INTEGER, block_idx INTEGER, sample_idx INTEGER,
            pc1 REAL, pc2 REAL,
            PRIMARY KEY (step, block_idx, sample_idx))""",
        """CREATE TABLE IF NOT EXISTS eval_results (
            step INTEGER, ts REAL, dataset TEXT,
            bpb REAL, compressed_bytes INTEGER, original_bytes INTEGER,
            roundtrip_ok INTEGER,
            PRIMARY KEY (step, dataset))""",
        """CREATE TABLE IF NOT EXISTS compression_jobs (
            job_id INTEGER PRIMARY KEY AUTOINCREMENT,
            ts REAL, input_path TEXT, output_path TEXT,
            profile TEXT, checkpoint TEXT, status TEXT,
            raw_bytes INTEGER, compressed_bytes INTEGER, elapsed_s REAL)""",
    ]),
    ("inference-time MoD fraction", [
        "ALTER TABLE mod_gates ADD COLUMN fraction_inference REAL",
    ]),
    ("classical baselines measured beside each evaluation", [
        """CREATE TABLE IF NOT EXISTS eval_baselines (
            step INTEGER, dataset TEXT, method TEXT, compressed_bytes INTEGER,
            original_bytes INTEGER, seconds REAL, PRIMARY KEY (step, dataset, method))""",
    ]),
    ("system metrics sampled at each logged step", [
        """CREATE TABLE IF NOT EXISTS system_metrics (
            step INTEGER PRIMARY KEY, ts REAL, cpu_percent REAL, rss_bytes INTEGER,
            disk_free_bytes INTEGER, gpu_util REAL, gpu_mem_bytes INTEGER)""",
    ]),
]

SCHEMA_VERSION = len(MIGRATIONS)

# Tables whose rows belong to a training step (a resume discards rows after its checkpoint).
STEP_TABLES = ("train_metrics", "head_losses", "val_metrics", "moe_routing", "mod_gates",
               "activation_stats", "hidden_states", "system_metrics")


def table_columns(conn: sqlite3.Connection, table: str) -> list[str]:
    """`table`'s columns in their order (none for a table the database lacks)."""
    return [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]  # table: constant


def migrate(conn: sqlite3.Connection, target: int = SCHEMA_VERSION) -> int:
    """Bring the schema up to `target`, one transaction per migration; returns the old version.

    `conn` must be in autocommit mode (isolation_level=None): transactions are explicit here so
    that DDL and the version bump commit together, and a concurrent opener waits (IMMEDIATE).
    """
    old = conn.execute("PRAGMA user_version").fetchone()[0]
    if old > SCHEMA_VERSION:
        raise RuntimeError(f"metrics.db schema version {old} is newer than this program "
                           f"({SCHEMA_VERSION}); update u-moec-tiny to read it")
    for version in range(old + 1, target + 1):
        conn.execute("BEGIN IMMEDIATE")
        try:
            if conn.execute("PRAGMA user_version").fetchone()[0] >= version:
                conn.execute("ROLLBACK")  # another process migrated meanwhile
                continue
            for sql in MIGRATIONS[version - 1][1]:
                words = sql.split()
                if words[:2] == ["ALTER", "TABLE"] and words[3:5] == ["ADD", "COLUMN"] and \
                        words[5] in table_columns(conn, words[2]):  # an older tool already added it
                    continue
                conn.execute(sql)
            conn.execute(f"PRAGMA user_version = {int(version)}")
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
    return old
