"""Run comparison: load 2-8 runs (ours from metrics.db, Forge's from log.csv; cached, re-read when
their files change, ours incrementally) and tabulate them with the hyperparameters that differ.
Ours are shown in bits per byte, Forge's in bits per *token* (its "bytes" are tokens)."""
from __future__ import annotations

import csv
import io
import sqlite3
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from umoec import config as C
from umoec.metrics import read
from umoec.run.forge import LABEL_SUFFIX, ForgeFormatError, flatten
from umoec.units import nats_to_bits

from ..figures.compare import fmt_value
from . import forge
from .cache import SignatureCache
from .runs import resolve, summarise

MAX_RUNS = 8
# (id, header, d3 format of a numeric column: the data stays numeric, so sorting is numeric)
TABLE_COLUMNS = [("run", "run", None), ("kind", "kind", None), ("status", "status", None),
                 ("steps", "steps", ",d"), ("bytes", "training bytes", ".3s"),
                 ("time_s", "time (s)", ",.1f"), ("params", "params", ".3s"),
                 ("final_val", "final val", ".4f"), ("best_val", "best val", ".4f"),
                 ("best_val_step", "best val step", ",d"), ("unit", "unit", None)]


class CompareError(ValueError):
    """A run cannot be compared; the message says why."""


@dataclass
class RunData:
    """One run's curves, full resolution, oldest first."""

    key: str
    name: str
    kind: str                          # "umoec" or "forge"
    unit: str                          # "bits/byte" or "bits/token"
    step: np.ndarray
    train_bits: np.ndarray
    bytes_seen: np.ndarray | None   # Forge: tokens
    elapsed: np.ndarray | None
    val_step: np.ndarray
    val_bits: np.ndarray
    config: dict[str, Any] = field(default_factory=dict)
    params: int | None = None
    status: str = ""
    bytes_note: str = ""               # "" or what the bytes axis holds instead of bytes
    gen: int = 0                       # our runs: starts + resumes (a resume rewrites rows)
    missing: dict[str, str] = field(default_factory=dict)   # axis -> why it cannot be drawn
    # system_metrics rows: "step" and each of read.SYSTEM_SERIES, NaN where not measured; {} = none
    system: dict[str, np.ndarray] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return self.name + (LABEL_SUFFIX if self.kind == "forge" else "")

    def x(self, axis: str) -> np.ndarray | None:
        """The training rows' x on `axis` (None where this run has none)."""
        return {"bytes": self.bytes_seen, "time": self.elapsed}.get(axis, self.step.astype(np.float64))

    def x_at(self, steps: np.ndarray, axis: str) -> np.ndarray | None:
        """x of rows logged at `steps` (validation, system samples): the training rows' bytes or
        time interpolated at those steps; NaN where there is no training row to go by."""
        x = self.x(axis)
        if x is None:
            return None
        if axis == "step":
            return np.asarray(steps, dtype=np.float64)
        if len(self.step) == 0:
            return np.full(len(steps), np.nan)
        return np.interp(steps, self.step, x)

    def best_val(self) -> tuple[int, float] | None:
        if len(self.val_bits) == 0 or not np.isfinite(self.val_bits).any():
            return None
        i = int(np.nanargmin(self.val_bits))
        return int(self.val_step[i]), float(self.val_bits[i])


# -- loading -------------------------------------------------------------------------------------
_RUNS = SignatureCache(16)      # RunData per run, extended while a run grows
_CONFIGS = SignatureCache(64)   # flattened config.yaml and parameter count per run


def _stat(path: Path) -> tuple[int, int]:
    try:
        st = path.stat()
        return st.st_size, st.st_mtime_ns
    except OSError:
        return -1, -1


def run_config(path: Path) -> tuple[dict[str, Any], int | None]:
    """(flattened config.yaml, total parameters by umoec.sizing) of one of our runs; cached."""
    return _CONFIGS.get(str(path), _stat(path), lambda _stale: _read_config(path))


def _read_config(path: Path) -> tuple[dict[str, Any], int | None]:
    try:
        cfg = C.load(path)
    except C.ConfigError:
        return {}, None
    from umoec.sizing import total_params
    try:
        params = int(total_params(cfg))
    except Exception:  # sizing is informative; a bad config must not break the table
        params = None
    return flatten(C.to_dict(cfg)), params


def _append_system(old: dict[str, np.ndarray], new: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    if not old or not new:
        return old or new
    return {k: np.concatenate([old[k], v]) for k, v in new.items()}


def _load_umoec(runs_dir: Path, key: str, cached: RunData | None) -> RunData:
    run = resolve(runs_dir, key)
    if run is None:
        raise CompareError(f"{key}: no such run in {runs_dir}")
    try:
        with read.open_db(run.db_path) as conn:
            gen = read.run_generation(conn)
            if cached is not None and cached.gen == gen and len(cached.step):
                last_val = float(cached.val_step[-1]) if len(cached.val_step) else -1.0
                train, val = read.series_arrays(conn, float(cached.step[-1]), last_val)
                last_sys = float(cached.system["step"][-1]) if cached.system else -1.0
                new = dict(zip(("step", "elapsed", "train_bits", "bytes_seen", "val_step", "val_bits"),
                               (*train, *val), strict=True))
                return replace(cached, **{k: np.concatenate([getattr(cached, k), v]) for k, v in new.items()},
                               system=_append_system(cached.system, read.system_arrays(conn, last_sys)))
            (st, el, bpb, by), (vs, vb) = read.series_arrays(conn)
            system = read.system_arrays(conn)
    except FileNotFoundError:
        raise CompareError(f"{key}: no metrics.db yet (the run has not logged its first step)") from None
    except sqlite3.DatabaseError as exc:
        raise CompareError(f"{key}: cannot read metrics.db ({exc})") from None
    config, params = run_config(run.config_path)
    return RunData(key, run.name, "umoec", "bits/byte", st, bpb, by, el, vs, vb, config, params,
                   gen=gen, system=system)


def _load_forge(run: forge.ForgeRun) -> RunData:
    log = run.read_log()
    t = log.train
    step = t["step"].to_numpy(dtype=np.float64)
    bits = nats_to_bits(t["loss"].to_numpy(dtype=np.float64))
    elapsed = t["elapsed_s"].to_numpy(dtype=np.float64) if log.has_elapsed else None
    per_step = run.tokens_per_step()
    tokens, bytes_note = None, ""
    if per_step:
        tokens = step * per_step
        bytes_note = "tokens (config.json)"
    elif elapsed is not None and t["tokens_per_sec"].notna().any():
        dt = np.diff(elapsed, prepend=0.0).clip(min=0.0)
        tokens = np.cumsum(np.nan_to_num(t["tokens_per_sec"].to_numpy(dtype=np.float64)) * dt)
        bytes_note = "tokens, estimated from tokens_per_sec x elapsed_s"
    missing = {}
    if tokens is None:
        missing["bytes"] = "no config.json and no elapsed_s to count tokens"
    if elapsed is None:
        missing["time"] = "log.csv has no elapsed_s column (older Forge build)"
    val_step = log.val["step"].to_numpy(dtype=np.float64)
    val_bits = nats_to_bits(log.val["val_loss"].to_numpy(dtype=np.float64))
    return RunData(run.key, run.name, "forge", "bits/token", step, bits, tokens, elapsed, val_step,
                   val_bits, run.config(), None, bytes_note=bytes_note, missing=missing)


def load_run(runs_dir: Path, key: str, status: bool = True) -> RunData:
    """A run's curves by its selector value (ours or Forge); CompareError says why not.
    `status=False` skips reading its status (the System chart has no use for it)."""
    runs_dir = Path(runs_dir)
    run, fr = forge.resolve_any(runs_dir, key)
    if fr is not None:
        sig: Any = ("forge", fr.signature(), _stat(fr.path / "config.json"))
    else:
        root = runs_dir / key
        wal = _stat(root / "metrics.db-wal")  # an empty WAL (a reader opened it) = no WAL
        sig = ("umoec", _stat(root / "metrics.db"), wal if wal[0] > 0 else None,
               _stat(root / "config.yaml"))
    def build(stale: RunData | None) -> RunData:
        try:
            return _load_forge(fr) if fr is not None else _load_umoec(runs_dir, key, stale)
        except ForgeFormatError as exc:
            raise CompareError(f"{key}: {exc}") from None
    data = _RUNS.get(f"{runs_dir}\0{key}", sig, build)
    if status and fr is not None:
        data.status = fr.status_label()
    elif status:
        data.status = summarise(run).label if run is not None else "?"
    return data


def load_runs(runs_dir: Path, keys: list[str],
              status: bool = True) -> tuple[list[RunData], list[str]]:
    """The runs that could be loaded (in order, at most MAX_RUNS) and a message per failure."""
    out, errors = [], []
    for key in keys[:MAX_RUNS]:
        try:
            out.append(load_run(runs_dir, key, status))
        except CompareError as exc:
            errors.append(str(exc))
    return out, errors


# -- table ---------------------------------------------------------------------------------------
def summary_rows(runs: list[RunData], diff: dict[str, list[str]]) -> list[dict[str, Any]]:
    """One row per run: TABLE_COLUMNS plus every differing key (numbers stay numbers: sortable)."""
    def last(values: np.ndarray | None, digits: int | None = None) -> float | None:
        if values is None or not len(values) or not np.isfinite(values[-1]):
            return None
        return float(values[-1]) if digits is None else round(float(values[-1]), digits)

    rows = []
    for r in runs:
        best = r.best_val()
        row = {"run": r.label, "kind": "Forge" if r.kind == "forge" else "u-moec-tiny", "status": r.status,
               "steps": int(r.step[-1]) if len(r.step) else None, "bytes": last(r.bytes_seen),
               "time_s": last(r.elapsed, 1), "params": r.params, "final_val": last(r.val_bits, 4),
               "best_val": round(best[1], 4) if best else None,
               "best_val_step": best[0] if best else None, "unit": r.unit}
        for k in diff.get(r.kind, []):
            v = r.config.get(k)
            row[k] = v if isinstance(v, (int, float)) and not isinstance(v, bool) else fmt_value(v)
        rows.append(row)
    return rows


def table_columns(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """DataTable columns: the fixed ones, then the differing hyperparameters."""
    cols = [{"name": name, "id": cid, "type": "numeric" if fmt else "text",
             **({"format": {"specifier": fmt}} if fmt else {})} for cid, name, fmt in TABLE_COLUMNS]
    fixed = {c for c, _, _ in TABLE_COLUMNS}
    extra = []
    for row in rows:
        extra += [k for k in row if k not in fixed and k not in extra]
    for k in extra:
        numeric = all(isinstance(r.get(k), (int, float)) or r.get(k) is None for r in rows)
        cols.append({"name": k, "id": k, "type": "numeric" if numeric else "text"})
    return cols


def table_csv(rows: list[dict[str, Any]], columns: list[dict[str, Any]] | None = None) -> str:
    """The table as CSV text (header = column names as shown), rows in the given order."""
    columns = columns or table_columns(rows)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([c["name"] for c in columns])
    for row in rows:
        writer.writerow(["" if row.get(c["id"]) is None else row.get(c["id"]) for c in columns])
    return out.getvalue()


def data_extent(runs: list[RunData], axis: str) -> list[float] | None:
    """[first x, last x] over the runs on `axis`, or None when none has data there."""
    ends = [(float(np.nanmin(x)), float(np.nanmax(x))) for x in (r.x(axis) for r in runs)
            if x is not None and len(x) and np.isfinite(x).any()]
    if not ends:
        return None
    lo, hi = min(e[0] for e in ends), max(e[1] for e in ends)
    return [lo, hi] if hi > lo else None


def data_signature(runs: list[RunData]) -> list:
    """What the charts depend on: changes when any chosen run has new rows or a new status."""
    return [[r.key, int(r.step[-1]) if len(r.step) else -1, len(r.step), len(r.val_step), r.gen,
             r.status.split(" (")[0]] for r in runs]


def system_signature(runs: list[RunData]) -> list:
    """What the System chart depends on: the runs drawn and their newest sample (a resume that
    rewrote samples changes `gen`)."""
    return [[r.key, r.gen, len(r.system.get("step", ())),
             float(r.system["step"][-1]) if r.system else -1.0] for r in runs]
