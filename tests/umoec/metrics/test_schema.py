"""Schema creation and in-place upgrades of older databases."""
import sqlite3

import pytest

from umoec.metrics import SCHEMA_VERSION, TrainingDB, connect, migrate
from umoec.metrics.schema import MIGRATIONS

SPEC_TABLES = {
    "activation_stats": ["step", "block_idx", "mean", "std", "p1", "p25", "p50", "p75", "p99"],
    "hidden_states": ["step", "block_idx", "sample_idx", "pc1", "pc2"],
    "eval_results": ["step", "ts", "dataset", "bpb", "compressed_bytes", "original_bytes",
                     "roundtrip_ok"],
    "compression_jobs": ["job_id", "ts", "input_path", "output_path", "profile", "checkpoint",
                         "status", "raw_bytes", "compressed_bytes", "elapsed_s"],
}
SPEC_KEYS = {"activation_stats": ["step", "block_idx"],
             "hidden_states": ["step", "block_idx", "sample_idx"],
             "eval_results": ["step", "dataset"], "compression_jobs": ["job_id"]}


def columns(conn, table):
    return [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]


def primary_key(conn, table):
    rows = sorted((r[5], r[1]) for r in conn.execute(f"PRAGMA table_info({table})") if r[5])
    return [name for _, name in rows]


def test_new_database_has_the_spec_tables_exactly(tmp_path):
    with TrainingDB(tmp_path / "m.db") as db:
        for table, cols in SPEC_TABLES.items():
            assert columns(db.conn, table) == cols
            assert primary_key(db.conn, table) == SPEC_KEYS[table]
        assert db.conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert db.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_version_1_database_is_upgraded_in_place_and_keeps_rows(tmp_path):
    path = tmp_path / "old.db"
    conn = connect(path)
    migrate(conn, target=1)
    conn.execute("INSERT INTO mod_gates VALUES (10, 1, 0.5, 0.5)")
    conn.execute("INSERT INTO train_metrics (step, loss) VALUES (10, 2.5)")
    conn.close()
    with TrainingDB(path) as db:
        assert db.conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert db.conn.execute("SELECT loss FROM train_metrics").fetchall() == [(2.5,)]
        assert db.conn.execute("SELECT * FROM mod_gates").fetchall() == [(10, 1, 0.5, 0.5, None)]
        assert set(SPEC_TABLES) <= {r[0] for r in db.conn.execute(
            "SELECT name FROM sqlite_master WHERE type='table'")}


def test_unversioned_legacy_database_with_spec_tables_upgrades(tmp_path):
    """A database some older tool made (tables present, user_version 0) is adopted, not broken."""
    path = tmp_path / "legacy.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE mod_gates (step INTEGER, block_idx INTEGER, fraction_processed REAL,"
                 " capacity REAL, fraction_inference REAL, PRIMARY KEY (step, block_idx))")
    conn.execute("CREATE TABLE eval_results (step INTEGER, ts REAL, dataset TEXT, bpb REAL, "
                 "compressed_bytes INTEGER, original_bytes INTEGER, roundtrip_ok INTEGER, "
                 "PRIMARY KEY (step, dataset))")
    conn.execute("INSERT INTO eval_results VALUES (1, 0, 'x', 2.0, 1, 4, 1)")
    conn.commit()
    conn.close()
    with TrainingDB(path) as db:
        assert db.conn.execute("SELECT COUNT(*) FROM eval_results").fetchone()[0] == 1
        assert db.conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def test_newer_schema_is_refused_with_a_clear_message(tmp_path):
    path = tmp_path / "future.db"
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {len(MIGRATIONS) + 5}")
    conn.close()
    with pytest.raises(RuntimeError, match="newer than this program"):
        TrainingDB(path)


def test_migrating_twice_is_harmless(tmp_path):
    TrainingDB(tmp_path / "m.db").close()
    with TrainingDB(tmp_path / "m.db") as db:
        assert migrate(db.conn) == SCHEMA_VERSION
