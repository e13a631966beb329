"""Read queries for the cockpit: parameterised SQL in, pandas DataFrames out.

Every function takes an open connection (see `open_db`) and returns a DataFrame with fixed
columns, empty when the run has no such rows yet or its database predates the table. `since_step`
arguments let live views fetch only rows newer than what the page already shows.
"""
from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import pandas as pd

from umoec.metrics.db import connect

from .services.cache import SignatureCache

# What reading a run's database can raise: the callbacks that read one show these as a message.
READ_ERRORS = (FileNotFoundError, sqlite3.Error, OSError, ValueError)
# A database that is missing or unreadable, and nothing else: for callbacks that also build their
# figures inside the read (the Training tab), where any other error is a bug to report, not hide.
OPEN_ERRORS = (FileNotFoundError, sqlite3.DatabaseError)

TRAIN_COLUMNS = ["step", "ts", "elapsed_s", "loss", "bpb", "lr", "grad_norm", "tokens_per_sec",
                 "bytes_seen"]
ROUTING_COLUMNS = ["step", "block_idx", "expert_idx", "load", "bias"]
MOD_COLUMNS = ["step", "block_idx", "fraction_processed", "capacity", "fraction_inference"]
ACTIVATION_COLUMNS = ["step", "block_idx", "mean", "std", "p1", "p25", "p50", "p75", "p99"]
HIDDEN_COLUMNS = ["step", "block_idx", "sample_idx", "pc1", "pc2"]
EVAL_COLUMNS = ["step", "ts", "dataset", "bpb", "compressed_bytes", "original_bytes",
                "roundtrip_ok"]
JOB_COLUMNS = ["job_id", "ts", "input_path", "output_path", "profile", "checkpoint", "status",
               "raw_bytes", "compressed_bytes", "elapsed_s"]
VAL_COLUMNS = ["step", "ts", "loss", "bpb", "n_bytes"]
HEAD_COLUMNS = ["step", "head", "loss"]
EVENT_COLUMNS = ["event_id", "ts", "step", "kind", "message"]


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


def db_read_error(path, exc: BaseException) -> str:
    """What a tab says about a metrics database it cannot read: retry only when that can help."""
    text = str(exc)
    if transient(exc):
        return f"{path} is busy ({text}); the next refresh will try again."
    if "not a database" in text or "malformed" in text:
        return (f"Cannot read {path}: {text}. The file is damaged or not a database, so this tab "
                "cannot show this run (its log.csv and training.log still hold the training "
                "metrics).")
    return f"Cannot read {path}: {text}"


def _query(conn: sqlite3.Connection, sql: str, params: Sequence,
           columns: list[str]) -> pd.DataFrame:
    try:
        rows = conn.execute(sql, tuple(params)).fetchall()
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc) or "no such column" in str(exc):
            return pd.DataFrame(columns=columns)
        raise
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


_SERIES = SignatureCache(8)   # train_series of the runs shown lately, extended as they grow


def cached_train_series(conn: sqlite3.Connection, path: str | os.PathLike,
                        columns: Sequence[str]) -> pd.DataFrame:
    """train_series(conn, columns) of the database at `path`, kept between calls and extended
    with the rows logged since: a page load or full redraw of a long run reads only what is new
    (200,000 rows take ~0.25 s to read). The signature is the run's first row (step and time: a
    run recreated under the same name is another run), its generation (a resume rewrites rows
    after its checkpoint) and its newest step. The frame is shared: callers must not modify it."""
    try:  # which run's rows: a run recreated under the same name logged its first row later
        first = conn.execute("SELECT step, ts FROM train_metrics ORDER BY step LIMIT 1").fetchone()
    except sqlite3.OperationalError:
        first = None
    ident = (first, run_generation(conn))
    last = latest_step(conn)

    def build(stale):
        if stale is not None and stale[0] == ident and len(stale[1]) and last is not None:
            old = stale[1]
            had = int(old["step"].iloc[-1])
            if last >= had:
                new = train_series(conn, columns, since_step=had)
                return ident, (pd.concat([old, new], ignore_index=True) if len(new) else old)
        return ident, train_series(conn, columns)

    return _SERIES.get((str(path), tuple(columns)), (ident, last), build)[1]


def metrics_export(conn: sqlite3.Connection) -> pd.DataFrame:
    """Every train_metrics row with the validation bpb of its step (empty when none), oldest
    first: what the Training tab's CSV export holds."""
    train = train_metrics(conn)
    val = val_metrics(conn)[["step", "bpb"]].rename(columns={"bpb": "val_bpb"})
    return train.merge(val.drop_duplicates("step", keep="last"), on="step", how="left")


SYSTEM_COLUMNS = ["step", "ts", "cpu_percent", "rss_bytes", "disk_free_bytes", "gpu_util",
                  "gpu_mem_bytes"]


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


BASELINE_COLUMNS = ["step", "dataset", "method", "compressed_bytes", "original_bytes", "seconds"]


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
