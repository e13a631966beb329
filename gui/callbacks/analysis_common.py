"""Plumbing shared by the analysis tabs (routing, MoD, activations, brain).

- `probe`: one cheap look at the selected run (a few index lookups): which rows a per-step table
  has, or the message to show instead (no run, no database, unreadable database, a model without
  MoE/MoD blocks, nothing logged yet). Callbacks compare its `version` with what the page already
  shows and do nothing when it has not changed.
- `slider_props`: a step slider over the logged steps that follows the newest step until the user
  moves it back.
- `HistoryCache`: a per-step table's history, read incrementally (only rows newer than the
  cache) and thinned to a bounded number of steps, so a refresh of a 200k-step run costs what a
  5k one does.
"""
from __future__ import annotations

import math
import sqlite3
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path

import dash_bootstrap_components as dbc
import numpy as np
import pandas as pd
import yaml
from dash import Output

from .. import db
from ..runs import resolve


def no_run(runs_dir: Path) -> str:
    """The empty state when no run is selected: how to make one in *this* runs folder."""
    return ("No run selected. Create one with: python -m bin.simulate_training --steps 5000 "
            f"--out {Path(runs_dir) / 'demo'}")


# -- what a run's config says (for empty states) ------------------------------------------------
def run_config(run) -> dict:
    """The run's frozen config.yaml as a plain dict ({} when missing or unreadable)."""
    try:
        data = yaml.safe_load(Path(run.config_path).read_text())
    except (OSError, yaml.YAMLError):
        return {}
    return data if isinstance(data, dict) else {}


def _section(cfg: dict, name: str) -> dict:
    value = cfg.get(name)
    return value if isinstance(value, dict) else {}


def block_pattern(cfg: dict) -> str | None:
    """model.block_pattern repeated to model.n_blocks, or None if the config does not say."""
    model = _section(cfg, "model")
    pattern, n = model.get("block_pattern"), model.get("n_blocks")
    if not isinstance(pattern, str) or not pattern or not isinstance(n, int):
        return None
    return (pattern * (n // len(pattern) + 1))[:n]


def config_value(cfg: dict, section: str, key: str, default=None):
    return _section(cfg, section).get(key, default)


# -- probing the selected run -------------------------------------------------------------------
@dataclass
class Probe:
    """What one cheap look at a run found. `message` set = show it instead of data."""

    run: object = None
    message: str | None = None
    colour: str = "info"
    first: int | None = None
    last: int | None = None
    interval: int | None = None
    generation: int = 0
    extra: dict = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.message is None

    @property
    def version(self) -> dict:
        """Changes exactly when what the tab shows may change (run, restart/resume, new rows)."""
        return {"run": getattr(self.run, "name", None), "gen": self.generation, "last": self.last,
                "message": self.message, "first": self.first, **self.extra}

    def alert(self):
        return dbc.Alert(self.message, color=self.colour, class_name="mb-3") if self.message else None


def probe(runs_dir: Path, name: str | None, table: str, missing) -> Probe:
    """Look at `table` of run `name`; `missing(run, cfg)` explains an empty table."""
    run = resolve(runs_dir, name)
    if run is None:
        return Probe(message=no_run(runs_dir))
    p = Probe(run=run)
    try:
        with db.open_db(run.db_path) as conn:
            p.first, p.last, p.interval = db.step_bounds(conn, table)
            p.generation = db.run_generation(conn)
            has_metrics = db.latest_step(conn) is not None
    except FileNotFoundError:
        p.message = f"Run {run.name} has no metrics database yet ({run.db_path})."
        return p
    except (sqlite3.Error, OSError, ValueError) as exc:
        p.message, p.colour = f"Cannot read {run.db_path}: {exc}", "danger"
        return p
    if p.last is None:
        p.message = missing(run, run_config(run), has_metrics)
    return p


def db_error(run, exc: Exception) -> str:
    return f"Cannot read {run.db_path}: {exc}"


def wrap(message: str, width: int = 70) -> str:
    """A message for a figure annotation, broken onto lines of about `width` characters."""
    lines, line = [], ""
    for word in message.split():
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}".strip()
    return "<br>".join([*lines, line])


# -- step sliders -------------------------------------------------------------------------------
def short_step(n: int) -> str:
    """Compact slider mark: 950, 12k, 1.5k, 200k, 1.2M."""
    if n < 1000:
        return str(n)
    if n < 1_000_000:
        return f"{n / 1000:.1f}".rstrip("0").rstrip(".") + "k"
    return f"{n / 1e6:.1f}".rstrip("0").rstrip(".") + "M"


def slider_marks(first: int, last: int, n: int = 6) -> dict:
    """About n marks at round step numbers between first and last (both ends included)."""
    if last <= first:
        return {str(first): short_step(first)}
    raw = (last - first) / max(1, n - 1)
    mag = 10 ** math.floor(math.log10(raw))
    nice = min((m * mag for m in (1, 2, 2.5, 5, 10)), key=lambda v: abs(v - raw))
    nice = max(1, int(nice))
    ticks = list(range(int(math.ceil(first / nice) * nice), last + 1, nice))
    marks = {t: short_step(t) for t in ticks if t - first > 0.4 * nice and last - t > 0.4 * nice}
    marks.update({first: short_step(first), last: short_step(last)})
    return {str(k): v for k, v in sorted(marks.items())}


def slider_props(p: Probe, value: int | None, old_max: int | None) -> tuple:
    """(min, max, step, marks, value, disabled) of a step slider; follows the newest step when
    the user left it at the right end (or never touched it)."""
    if not p.ok:
        return 0, 0, 1, {}, None, True
    first, last = p.first, p.last
    follow = value is None or old_max is None or value >= old_max
    new_value = last if follow else min(max(int(value), first), last)
    return first, last, (p.interval or 1), slider_marks(first, last), new_value, first == last


SLIDER_PROPS = ("min", "max", "step", "marks", "value", "disabled")


def slider_outputs(slider_id: str) -> list:
    """The Outputs that `slider_props` fills, in its order."""
    return [Output(slider_id, prop) for prop in SLIDER_PROPS]


def step_label(shown: int | None, last: int | None) -> str:
    if shown is None:
        return ""
    suffix = " (newest)" if shown == last else f" (newest: {last:,})" if last is not None else ""
    return f"step {shown:,}{suffix}"


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
    tail: pd.DataFrame | None = None   # rows of the newest step when it is not a kept one
    view: pd.DataFrame | None = None


class HistoryCache:
    """A per-step table's rows over time, read incrementally and thinned to <= max_steps steps.

    Keeps logged steps whose ordinal (0, 1, 2... in logging order) is a multiple of `stride`, a
    power of two that doubles whenever more than `max_steps` are kept; the newest step is always
    included. Each `get` reads only the steps logged since the previous call. A rewritten database
    (new file, run restarted or resumed: rows after the checkpoint are replaced) starts over.
    """

    def __init__(self, table: str, max_steps: int = 1200, max_runs: int = 4):
        self.table, self.max_steps, self.max_runs = table, max_steps, max_runs
        self._entries: OrderedDict[str, _Entry] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, conn: sqlite3.Connection, db_path) -> tuple[pd.DataFrame, int, int]:
        """(rows, stride, number of logged steps) for the run whose database is `db_path`."""
        key = str(db_path)
        st = Path(db_path).stat()
        ident = (st.st_dev, st.st_ino, db.run_generation(conn))
        with self._lock:
            entry = self._entries.get(key)
            if entry is None or entry.ident != ident:
                entry = _Entry(ident)
            self._entries[key] = entry
            self._entries.move_to_end(key)
            while len(self._entries) > self.max_runs:
                self._entries.popitem(last=False)
            last = db.step_bounds(conn, self.table)[1]
            if last is not None and last < entry.last_step:  # rows were discarded: start over
                entry = self._entries[key] = _Entry(ident)
            self._update(conn, entry)
            empty = pd.DataFrame(columns=db.STEP_TABLE_COLUMNS[self.table])
            return (entry.view if entry.view is not None else empty), entry.stride, entry.n_seen

    def _update(self, conn: sqlite3.Connection, e: _Entry) -> None:
        new = np.asarray(db.logged_steps(conn, self.table, since_step=e.last_step), dtype=np.int64)
        if len(new) == 0:
            return
        ords = e.n_seen + np.arange(len(new), dtype=np.int64)
        e.n_seen += len(new)
        if e.kept is None:  # first read: pick the stride up front instead of reading everything
            while -(-e.n_seen // e.stride) > self.max_steps:
                e.stride *= 2
        mask = ords % e.stride == 0
        wanted = set(new[mask].tolist()) | {int(new[-1])}
        rows = db.rows_at_steps(conn, self.table, sorted(wanted))
        kept_rows = rows[rows["step"].isin(new[mask])]
        e.kept = kept_rows if e.kept is None else pd.concat([e.kept, kept_rows], ignore_index=True)
        e.ordinals = np.concatenate([e.ordinals, ords[mask]])
        e.steps = np.concatenate([e.steps, new[mask]])
        while len(e.steps) > self.max_steps:
            e.stride *= 2
            keep = e.ordinals % e.stride == 0
            e.ordinals, e.steps = e.ordinals[keep], e.steps[keep]
            e.kept = e.kept[e.kept["step"].isin(e.steps)].reset_index(drop=True)
        e.tail = None if mask[-1] else rows[rows["step"] == new[-1]]
        e.last_step = int(new[-1])
        parts = [e.kept] + ([e.tail] if e.tail is not None and not e.tail.empty else [])
        e.view = pd.concat(parts, ignore_index=True) if len(parts) > 1 else e.kept


def history_note(stride: int, n_steps: int, hint: str = "") -> str:
    """Says how much of the history a chart shows."""
    if n_steps == 0:
        return ""
    if stride <= 1:
        return f"All {n_steps:,} logged steps."
    return (f"Every {stride}th of {n_steps:,} logged steps (thinned for speed; the newest step "
            f"is always included).{' ' + hint if hint else ''}")
