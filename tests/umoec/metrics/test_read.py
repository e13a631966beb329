"""umoec/metrics/read.py on databases older than the schema: the cockpit opens a run's database
read-only and never migrates it, so an old run must still show what it logged."""
from __future__ import annotations

import math
import sqlite3

from umoec.metrics import migrate, read

BEFORE_INFERENCE_FRACTION = 2   # migrations 1-2: mod_gates without fraction_inference
BEFORE_BASELINES = 3            # migrations 1-3: no eval_baselines table


def old_database(path, version: int) -> None:
    conn = sqlite3.connect(path, isolation_level=None)
    migrate(conn, target=version)
    conn.close()


def test_a_column_added_later_reads_as_null_and_the_rest_of_the_row_is_kept(tmp_path):
    path = tmp_path / "metrics.db"
    old_database(path, BEFORE_INFERENCE_FRACTION)
    with sqlite3.connect(path) as conn:
        conn.executemany("INSERT INTO mod_gates VALUES (?, ?, ?, ?)",
                         [(10, 0, 0.5, 0.5), (10, 1, 0.25, 0.5), (20, 0, 0.75, 0.5)])
    with read.open_db(path) as conn:
        gates = read.mod_gates_at(conn)
        assert list(gates.columns) == read.MOD_COLUMNS
        assert gates[["step", "block_idx", "fraction_processed"]].values.tolist() == [[20, 0, 0.75]]
        assert all(v is None or math.isnan(v) for v in gates["fraction_inference"])
        assert len(read.rows_at_steps(conn, "mod_gates", [10, 20])) == 3
        assert conn.execute("PRAGMA table_info(mod_gates)").fetchall()[-1][1] == "capacity"  # unmigrated


def test_a_table_added_later_reads_as_no_rows(tmp_path):
    path = tmp_path / "metrics.db"
    old_database(path, BEFORE_BASELINES)
    with read.open_db(path) as conn:
        baselines = read.eval_baselines(conn)
    assert baselines.empty and list(baselines.columns) == read.BASELINE_COLUMNS
