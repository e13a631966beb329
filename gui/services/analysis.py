"""Reading the analysis tabs' data from a run (no Dash): `probe` (a few index lookups, or the
message to show instead), `read_shown`/`read_at` (a view's read for the step controls' version) and
`HistoryCache` (a table's history read incrementally and thinned)."""
from __future__ import annotations

import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from umoec.metrics import read

from ..view.analysis import Probe, no_run, wrap
from ..view.read_errors import db_read_error
from .runs import resolve


def run_config(run) -> dict:
    """The run's frozen config.yaml as a plain dict ({} when missing or unreadable)."""
    try:
        data = yaml.safe_load(Path(run.config_path).read_text())
    except (OSError, yaml.YAMLError):
        return {}
    return data if isinstance(data, dict) else {}


def probe(runs_dir: Path, name: str | None, table: str, missing) -> Probe:
    """Look at `table` of run `name`; `missing(run, cfg)` explains an empty table."""
    run = resolve(runs_dir, name)
    if run is None:
        return Probe(message=no_run(runs_dir))
    p = Probe(run=run)
    try:
        with read.open_db(run.db_path) as conn:
            p.first, p.last, p.interval = read.step_bounds(conn, table)
            p.generation = read.run_generation(conn)
            has_metrics = read.latest_step(conn) is not None
    except FileNotFoundError:
        p.message = f"Run {run.name} has no metrics database yet ({run.db_path})."
        return p
    except read.READ_ERRORS as exc:      # FileNotFoundError is answered above
        p.message, p.colour = db_read_error(run.db_path, exc), "danger"
        return p
    if p.last is None:
        p.message = missing(run, run_config(run), has_metrics)
    return p


def read_shown(runs_dir: Path, version: dict | None, read_fn: Callable):
    """("", read_fn(conn, run)) or (message for a figure, None) for the step controls' `version`;
    None when there is nothing to redraw (no version yet, or the run is gone: the next tick says)."""
    if not version:
        return None
    if version.get("message"):
        return wrap(version["message"]), None
    run = resolve(runs_dir, version["run"])
    if run is None:
        return None
    try:
        with read.open_db(run.db_path) as conn:
            return "", read_fn(conn, run)
    except read.READ_ERRORS as exc:
        return wrap(db_read_error(run.db_path, exc)), None


def read_at(runs_dir: Path, version: dict | None, table: str, step, reader: Callable):
    """read_shown of (the logged step of `table` nearest `step`, reader(conn, that step))."""
    def load(conn, _run):
        shown = read.nearest_logged_step(conn, table, step)
        return shown, reader(conn, shown)
    return read_shown(runs_dir, version, load)


# -- incremental, thinned history ---------------------------------------------------------------
@dataclass
class _Entry:
    ident: tuple
    last_step: int = -1
    n_seen: int = 0            # logged steps seen so far (ordinal of the next one)
    stride: int = 1            # every stride-th logged step is kept
    ordinals: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    steps: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    kept: pd.DataFrame | None = None
    view: pd.DataFrame | None = None   # kept, and the newest step's rows when it is not a kept one


class HistoryCache:
    """A per-step table's rows over time, read incrementally and thinned to <= max_steps steps: it
    keeps the logged steps whose ordinal is a multiple of `stride` (a power of two, doubled when
    more than max_steps are kept) and the newest; a rewritten database (resume) starts over."""

    def __init__(self, table: str, max_steps: int = 1200, max_runs: int = 4):
        self.table, self.max_steps, self.max_runs = table, max_steps, max_runs
        self._entries: OrderedDict[str, _Entry] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, conn: sqlite3.Connection, db_path) -> tuple[pd.DataFrame, int, int]:
        """(rows, stride, number of logged steps) for the run whose database is `db_path`."""
        key = str(db_path)
        st = Path(db_path).stat()
        ident = (st.st_dev, st.st_ino, read.run_generation(conn))
        with self._lock:
            entry = self._entries.get(key)
            last = read.step_bounds(conn, self.table)[1]
            if entry is None or entry.ident != ident or (last is not None and last < entry.last_step):
                entry = _Entry(ident)           # another run, or rows were discarded: start over
            self._entries[key] = entry
            self._entries.move_to_end(key)
            while len(self._entries) > self.max_runs:
                self._entries.popitem(last=False)
            self._update(conn, entry)
            empty = pd.DataFrame(columns=read.STEP_TABLE_COLUMNS[self.table])
            return (entry.view if entry.view is not None else empty), entry.stride, entry.n_seen

    def _update(self, conn: sqlite3.Connection, e: _Entry) -> None:
        new = np.asarray(read.logged_steps(conn, self.table, since_step=e.last_step), dtype=np.int64)
        if len(new) == 0:
            return
        ords = e.n_seen + np.arange(len(new), dtype=np.int64)
        e.n_seen += len(new)
        if e.kept is None:  # first read: pick the stride up front instead of reading everything
            while -(-e.n_seen // e.stride) > self.max_steps:
                e.stride *= 2
        mask = ords % e.stride == 0
        wanted = set(new[mask].tolist()) | {int(new[-1])}
        rows = read.rows_at_steps(conn, self.table, sorted(wanted))
        kept_rows = rows[rows["step"].isin(new[mask])]
        e.kept = kept_rows if e.kept is None else pd.concat([e.kept, kept_rows], ignore_index=True)
        e.ordinals = np.concatenate([e.ordinals, ords[mask]])
        e.steps = np.concatenate([e.steps, new[mask]])
        while len(e.steps) > self.max_steps:
            e.stride *= 2
            keep = e.ordinals % e.stride == 0
            e.ordinals, e.steps = e.ordinals[keep], e.steps[keep]
            e.kept = e.kept[e.kept["step"].isin(e.steps)].reset_index(drop=True)
        tail = rows[rows["step"] == new[-1]]
        e.last_step = int(new[-1])
        e.view = e.kept if mask[-1] or tail.empty else pd.concat([e.kept, tail], ignore_index=True)
