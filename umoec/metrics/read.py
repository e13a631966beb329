"""Read queries on a run's metrics database: parameterised SQL in, pandas DataFrames out.

Every function takes an open connection (see `open_db`) and returns a DataFrame with fixed
columns (the schema's, `COLUMNS`), empty when the run has no such rows yet or its database
predates the table. `since_step` arguments let live views fetch only rows newer than what a page
already shows. The writer is umoec/metrics/db.py; the cockpit and reports read through here.
"""
from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import numpy as np
import pandas as pd

from .db import connect
from .schema import migrate, table_columns

# What reading a run's database can raise: the callbacks that read one show these as a message.
READ_ERRORS = (FileNotFoundError, sqlite3.Error, OSError, ValueError)
# A database that is missing or unreadable, and nothing else: for callbacks that also build their
# figures inside the read (the Training tab), where any other error is a bug to report, not hide.
OPEN_ERRORS = (FileNotFoundError, sqlite3.DatabaseError)


def _schema_columns() -> dict[str, list[str]]:
    """Every table's columns in the current schema's order (read from a migrated empty database,
    so the column lists cannot drift from the DDL)."""
    conn = sqlite3.connect(":memory:", isolation_level=None)
    try:
        migrate(conn)
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' "
                                             "AND name NOT LIKE 'sqlite_%'")]
        return {t: table_columns(conn, t) for t in tables}
    finally:
        conn.close()


COLUMNS = _schema_columns()
TRAIN_COLUMNS = COLUMNS["train_metrics"]
ROUTING_COLUMNS = COLUMNS["moe_routing"]
MOD_COLUMNS = COLUMNS["mod_gates"]
ACTIVATION_COLUMNS = COLUMNS["activation_stats"]
HIDDEN_COLUMNS = COLUMNS["hidden_states"]
EVAL_COLUMNS = COLUMNS["eval_results"]
JOB_COLUMNS = COLUMNS["compression_jobs"]
VAL_COLUMNS = COLUMNS["val_metrics"]
HEAD_COLUMNS = COLUMNS["head_losses"]
EVENT_COLUMNS = COLUMNS["run_events"]
BASELINE_COLUMNS = COLUMNS["eval_baselines"]
SYSTEM_COLUMNS = COLUMNS["system_metrics"]


@contextmanager
def open_db(path: str | os.PathLike) -> Iterator[sqlite3.Connection]:
    """A read-only connection, always closed; FileNotFoundError if the run has no database."""
    conn = connect(path, readonly=True)
    try:
        yield conn
    finally:
        conn.close()


def transient(exc: BaseException) -> bool:
    """A read error that the next refresh can overcome (the writer holds a lock)."""
    text = str(exc).lower()
    return "locked" in text or "busy" in text


def _query(conn: sqlite3.Connection, sql: str, params: Sequence,
           columns: list[str]) -> pd.DataFrame:
    """`sql` is `SELECT <columns> FROM <table> ...`. A database older than the table gives no
    rows; one older than a column (the cockpit never migrates a run's database) gives NULL in it."""
    try:
        rows = conn.execute(sql, tuple(params)).fetchall()
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc):
            return pd.DataFrame(columns=columns)
        if "no such column" not in str(exc):
            raise
        rest = sql.split(" FROM ", 1)[1]
        have = set(table_columns(conn, rest.split()[0]))
        listed = ", ".join(c if c in have else f"NULL AS {c}" for c in columns)
        try:
            rows = conn.execute(f"SELECT {listed} FROM {rest}", tuple(params)).fetchall()
        except sqlite3.OperationalError:   # the missing column is in the WHERE clause
            return pd.DataFrame(columns=columns)
    return pd.DataFrame.from_records(rows, columns=columns)


def _since(since_step: int | None) -> tuple[str, list]:
    return ("WHERE step > ?", [since_step]) if since_step is not None else ("", [])


def _at_step(conn: sqlite3.Connection, table: str, step: int | None) -> int | None:
    """`step` if given, else the newest step present in `table` (a trusted constant)."""
    if step is not None:
        return step
    try:
        return conn.execute(f"SELECT MAX(step) FROM {table}").fetchone()[0]
    except sqlite3.OperationalError:
        return None


# -- training ----------------------------------------------------------------------------------
def latest_step(conn: sqlite3.Connection) -> int | None:
    return _at_step(conn, "train_metrics", None)


def train_metrics(conn: sqlite3.Connection, since_step: int | None = None) -> pd.DataFrame:
    where, params = _since(since_step)
    return _query(conn, f"SELECT {', '.join(TRAIN_COLUMNS)} FROM train_metrics {where} "
                  "ORDER BY step", params, TRAIN_COLUMNS)


def train_series(conn: sqlite3.Connection, columns: Sequence[str] = ("step", "bpb", "lr", "grad_norm"),
                 since_step: int | None = None) -> pd.DataFrame:
    """Only the named train_metrics columns (the live charts need 4 of 9), oldest first."""
    cols = [c for c in columns if c in TRAIN_COLUMNS]
    if len(cols) != len(columns):
        raise ValueError(f"unknown train_metrics columns: {set(columns) - set(TRAIN_COLUMNS)}")
    where, params = _since(since_step)
    return _query(conn, f"SELECT {', '.join(cols)} FROM train_metrics {where} ORDER BY step",
                  params, cols)


def metrics_export(conn: sqlite3.Connection) -> pd.DataFrame:
    """Every train_metrics row with the validation bpb of its step (empty when none), oldest
    first: what the Training tab's CSV export holds."""
    train = train_metrics(conn)
    val = val_metrics(conn)[["step", "bpb"]].rename(columns={"bpb": "val_bpb"})
    return train.merge(val.drop_duplicates("step", keep="last"), on="step", how="left")


def system_metrics(conn: sqlite3.Connection) -> pd.DataFrame:
    """The run's system samples, oldest first (empty for a run logged before they existed)."""
    return _query(conn, f"SELECT {', '.join(SYSTEM_COLUMNS)} FROM system_metrics ORDER BY step",
                  [], SYSTEM_COLUMNS)


def recent_train_metrics(conn: sqlite3.Connection, n: int = 20) -> pd.DataFrame:
    """The newest `n` train_metrics rows, oldest first (ETA and step rate)."""
    df = _query(conn, f"SELECT {', '.join(TRAIN_COLUMNS)} FROM train_metrics ORDER BY step DESC "
                "LIMIT ?", [int(n)], TRAIN_COLUMNS)
    return df.iloc[::-1].reset_index(drop=True)


def latest_metrics(conn: sqlite3.Connection) -> dict | None:
    """The newest train_metrics row as a dict (the KPI cards), or None."""
    df = _query(conn, f"SELECT {', '.join(TRAIN_COLUMNS)} FROM train_metrics "
                "ORDER BY step DESC LIMIT 1", [], TRAIN_COLUMNS)
    return None if df.empty else df.iloc[0].to_dict()


def head_losses_at(conn: sqlite3.Connection, step: int | None = None) -> pd.DataFrame:
    """Loss of every head (final, exit_N, mtp_K, cascade) at `step` (default: newest)."""
    step = _at_step(conn, "head_losses", step)
    return _query(conn, "SELECT step, head, loss FROM head_losses WHERE step = ? ORDER BY head",
                  [step], HEAD_COLUMNS)


def val_metrics(conn: sqlite3.Connection, since_step: int | None = None) -> pd.DataFrame:
    where, params = _since(since_step)
    return _query(conn, f"SELECT {', '.join(VAL_COLUMNS)} FROM val_metrics {where} ORDER BY step",
                  params, VAL_COLUMNS)


def run_events(conn: sqlite3.Connection, since_id: int | None = None) -> pd.DataFrame:
    where, params = ("WHERE event_id > ?", [since_id]) if since_id is not None else ("", [])
    return _query(conn, f"SELECT {', '.join(EVENT_COLUMNS)} FROM run_events {where} "
                  "ORDER BY event_id", params, EVENT_COLUMNS)


# -- routing and MoD ---------------------------------------------------------------------------
def moe_routing_at(conn: sqlite3.Connection, step: int | None = None) -> pd.DataFrame:
    step = _at_step(conn, "moe_routing", step)
    return _query(conn, f"SELECT {', '.join(ROUTING_COLUMNS)} FROM moe_routing WHERE step = ? "
                  "ORDER BY block_idx, expert_idx", [step], ROUTING_COLUMNS)


def mod_gates_at(conn: sqlite3.Connection, step: int | None = None) -> pd.DataFrame:
    step = _at_step(conn, "mod_gates", step)
    return _query(conn, f"SELECT {', '.join(MOD_COLUMNS)} FROM mod_gates WHERE step = ? "
                  "ORDER BY block_idx", [step], MOD_COLUMNS)


# -- activations and hidden states (Activations and Brain tabs) --------------------------------
def activation_stats_at(conn: sqlite3.Connection, step: int | None = None) -> pd.DataFrame:
    """Per-block activation statistics at `step` (default: the newest snapshot)."""
    step = _at_step(conn, "activation_stats", step)
    return _query(conn, f"SELECT {', '.join(ACTIVATION_COLUMNS)} FROM activation_stats "
                  "WHERE step = ? ORDER BY block_idx", [step], ACTIVATION_COLUMNS)


def hidden_states_at(conn: sqlite3.Connection, step: int | None = None,
                     block_idx: int | None = None) -> pd.DataFrame:
    """PCA-projected hidden states at `step` (default: newest), one block or all."""
    step = _at_step(conn, "hidden_states", step)
    sql = f"SELECT {', '.join(HIDDEN_COLUMNS)} FROM hidden_states WHERE step = ?"
    params: list = [step]
    if block_idx is not None:
        sql += " AND block_idx = ?"
        params.append(block_idx)
    return _query(conn, sql + " ORDER BY block_idx, sample_idx", params, HIDDEN_COLUMNS)


# -- evaluation and compression (Compression and Evaluation tabs) ------------------------------
def eval_results(conn: sqlite3.Connection) -> pd.DataFrame:
    return _query(conn, f"SELECT {', '.join(EVAL_COLUMNS)} FROM eval_results ORDER BY step, "
                  "dataset", [], EVAL_COLUMNS)


def eval_baselines(conn: sqlite3.Connection) -> pd.DataFrame:
    """Classical compressors measured on the same bytes as each evaluation."""
    return _query(conn, f"SELECT {', '.join(BASELINE_COLUMNS)} FROM eval_baselines "
                  "ORDER BY step, dataset, method", [], BASELINE_COLUMNS)


def compression_jobs(conn: sqlite3.Connection, limit: int = 200) -> pd.DataFrame:
    return _query(conn, f"SELECT {', '.join(JOB_COLUMNS)} FROM compression_jobs "
                  "ORDER BY job_id DESC LIMIT ?", [int(limit)], JOB_COLUMNS)


# -- analysis tabs: step ranges and incremental reads -------------------------------------------
# Per-step tables the analysis tabs read; names are only ever taken from this mapping.
STEP_TABLE_COLUMNS = {"moe_routing": ROUTING_COLUMNS, "mod_gates": MOD_COLUMNS,
                      "activation_stats": ACTIVATION_COLUMNS, "hidden_states": HIDDEN_COLUMNS}
_IN_CHUNK = 500  # steps per `step IN (...)` query (well under SQLite's variable limit)


def _step_table(table: str) -> str:
    if table not in STEP_TABLE_COLUMNS:
        raise ValueError(f"not a per-step analysis table: {table!r}")
    return table


def step_bounds(conn: sqlite3.Connection, table: str) -> tuple[int | None, int | None,
                                                                 int | None]:
    """(first, last, interval) of the logged steps of `table`; Nones when it has no rows.

    Three index lookups whatever the table's size; `interval` is the gap between the first two
    logged steps (the logging cadence), or None when only one step is logged.
    """
    table = _step_table(table)
    try:
        last = conn.execute(f"SELECT MAX(step) FROM {table}").fetchone()[0]
        if last is None:
            return None, None, None
        first = conn.execute(f"SELECT MIN(step) FROM {table}").fetchone()[0]
        second = conn.execute(f"SELECT MIN(step) FROM {table} WHERE step > ?", (first,)).fetchone()[0]
    except sqlite3.OperationalError:
        return None, None, None
    return first, last, (second - first if second is not None else None)


def nearest_logged_step(conn: sqlite3.Connection, table: str, step: int | None) -> int | None:
    """The newest logged step of `table` at or before `step` (the first one if `step` is earlier)."""
    table = _step_table(table)
    if step is None:
        return _at_step(conn, table, None)
    try:
        found = conn.execute(f"SELECT MAX(step) FROM {table} WHERE step <= ?", (int(step),)).fetchone()[0]
        if found is None:
            found = conn.execute(f"SELECT MIN(step) FROM {table}").fetchone()[0]
    except sqlite3.OperationalError:
        return None
    return found


def logged_steps(conn: sqlite3.Connection, table: str, since_step: int | None = None) -> list[int]:
    """Logged steps of `table` newer than `since_step`, ascending.

    moe_routing is read through its (block_idx, expert_idx, step) index: one entry per step
    instead of one per (block, expert).
    """
    table = _step_table(table)
    since = -1 if since_step is None else int(since_step)
    if table == "moe_routing":
        sql = ("SELECT step FROM moe_routing WHERE block_idx = (SELECT MIN(block_idx) FROM moe_routing) "
               "AND expert_idx = 0 AND step > ? ORDER BY step")
    else:
        sql = f"SELECT DISTINCT step FROM {table} WHERE step > ? ORDER BY step"
    try:
        return [r[0] for r in conn.execute(sql, (since,))]
    except sqlite3.OperationalError:
        return []


def rows_at_steps(conn: sqlite3.Connection, table: str, steps: Sequence[int]) -> pd.DataFrame:
    """Every row of `table` at the given steps (ordered like the table's primary key)."""
    table = _step_table(table)
    columns = STEP_TABLE_COLUMNS[table]
    steps = sorted({int(s) for s in steps})
    order = ", ".join(c for c in columns if c.endswith("_idx") or c == "step")
    parts = []
    for i in range(0, len(steps), _IN_CHUNK):
        chunk = steps[i:i + _IN_CHUNK]
        marks = ",".join("?" * len(chunk))
        parts.append(_query(conn, f"SELECT {', '.join(columns)} FROM {table} WHERE step IN ({marks}) "
                            f"ORDER BY {order}", chunk, columns))
    if not parts:
        return pd.DataFrame(columns=columns)
    return parts[0] if len(parts) == 1 else pd.concat(parts, ignore_index=True)


def moe_expert_history(conn: sqlite3.Connection, block_idx: int, expert_idx: int,
                       since_step: int | None = None) -> pd.DataFrame:
    """Load and bias of one expert over time (the routing drill-down), via the expert index."""
    params: list = [int(block_idx), int(expert_idx)]
    extra = ""
    if since_step is not None:
        extra = " AND step > ?"
        params.append(int(since_step))
    return _query(conn, f"SELECT {', '.join(ROUTING_COLUMNS)} FROM moe_routing WHERE block_idx = ? "
                  f"AND expert_idx = ?{extra} ORDER BY step", params, ROUTING_COLUMNS)


def run_generation(conn: sqlite3.Connection) -> int:
    """How many times the run was started or resumed (a resume rewrites rows after its checkpoint)."""
    try:
        return int(conn.execute("SELECT COUNT(*) FROM run_events WHERE kind IN ('start', 'resume')")
                   .fetchone()[0])
    except sqlite3.OperationalError:
        return 0


# -- float arrays for long series (Compare) ----------------------------------------------------
def _columns(rows: list[tuple], n: int) -> list[np.ndarray]:
    if not rows:
        return [np.zeros(0) for _ in range(n)]
    a = np.array(rows, dtype=np.float64)
    return [a[:, i] for i in range(n)]


_TRAIN_SQL = "SELECT step, elapsed_s, bpb, bytes_seen FROM train_metrics WHERE step > ? ORDER BY step"
_VAL_SQL = "SELECT step, bpb FROM val_metrics WHERE step > ? ORDER BY step"
SYSTEM_SERIES = ("cpu_percent", "rss_bytes", "gpu_util", "gpu_mem_bytes", "disk_free_bytes")
_SYSTEM_SQL = f"SELECT step, {', '.join(SYSTEM_SERIES)} FROM system_metrics WHERE step > ? ORDER BY step"


def _fetch(conn: sqlite3.Connection, sql: str, since: float) -> list[tuple]:
    """The rows of `sql` after `since`; none when the table does not exist (an older run)."""
    try:
        return conn.execute(sql, (since,)).fetchall()
    except sqlite3.OperationalError as exc:
        if "no such table" not in str(exc):
            raise
        return []


def series_arrays(conn: sqlite3.Connection, since: float = -1.0,
                      since_val: float = -1.0) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """([step, elapsed_s, bpb, bytes_seen], [val step, val bpb]) of the rows newer than `since`
    (`since_val`) as float arrays (one fetch of plain tuples: the fastest way out of SQLite; the
    Compare tab's curves)."""
    return _columns(_fetch(conn, _TRAIN_SQL, since), 4), _columns(_fetch(conn, _VAL_SQL, since_val), 2)


def system_arrays(conn: sqlite3.Connection, since: float = -1.0) -> dict[str, np.ndarray]:
    """The system_metrics rows newer than `since` as {"step", *SYSTEM_SERIES} float arrays (NULL:
    NaN); {} when there are none (a run logged before the sampler existed has no such table)."""
    rows = _fetch(conn, _SYSTEM_SQL, since)
    if not rows:
        return {}
    return dict(zip(("step",) + SYSTEM_SERIES, _columns(rows, 1 + len(SYSTEM_SERIES)), strict=True))
