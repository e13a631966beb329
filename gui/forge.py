"""Forge run folders, opened read-only: log.csv parsed by its header, ckpt_*.bin listed.

A Forge run folder (Forge Studio's RESEARCH.md, sections 3 and 4) holds
    log.csv              step,loss,lr,grad_norm,tokens_per_sec,val_loss[,elapsed_s]
    ckpt_%06d.bin        every checkpoint_every steps, plus the final one
    ckpt_latest.bin      a copy of the newest checkpoint
    model.forge/         (optional) content-addressed weights
and no status.json (that is how it differs from our run folders).

log.csv rules this parser keeps:
- columns are found by the header's names (older Forge builds write 6 columns, without
  elapsed_s); a file without a header gets the documented column order by its field count;
- val_loss = -1 means "no evaluation at this step" (any negative value is treated the same);
- after a resume Forge reopens the file in append mode without a second header, so steps go
  back: a row for step s supersedes every earlier row at step >= s (the resumed run rewrites
  that stretch; rows of the dead attempt beyond it are dropped, not shown as if trained twice);
- elapsed_s restarts at a resume; segments are joined so the time axis keeps growing;
- a last line without its newline is being written: it is left for the next read;
- a line with the wrong number of fields or a non-numeric step is skipped and counted; a 6-column
  log continued by a 7-column build (or the other way round) is read by each line's field count.

Loss is Forge's cross-entropy in nats per *token*, so its "bits" are bits per token, not per byte;
the cockpit labels them so. Nothing here writes to a Forge folder.
"""
from __future__ import annotations

import io
import json
import os
import re
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import numpy as np
import pandas as pd

from umoec.run.atomic import atomic_write_text

LOG_NAME = "log.csv"
FORGE_COLUMNS = ("step", "loss", "lr", "grad_norm", "tokens_per_sec", "val_loss", "elapsed_s")
REQUIRED = ("step", "loss")
CKPT_RE = re.compile(r"^ckpt_(\d+)\.bin$")
LATEST_NAME = "ckpt_latest.bin"
CONFIG_NAMES = ("config.json", "forge_config.json")  # optional copy of the --config JSON
KEY_PREFIX = "forge:"   # run-selector value of a Forge folder opened from outside the runs folder
LABEL_SUFFIX = " (Forge, read-only)"
MAX_CONFIG_BYTES = 1 << 20
_NAN_WORDS = ("nan", "-nan", "+nan", "inf", "-inf", "+inf", "infinity", "-infinity")


class ForgeFormatError(ValueError):
    """log.csv cannot be read as a Forge log; the message says why."""


# == log.csv ====================================================================================
@dataclass
class ForgeLog:
    """A parsed log.csv: one row per step (resumes resolved), oldest first."""

    train: pd.DataFrame            # step, loss, lr, grad_norm, tokens_per_sec, elapsed_s (float)
    val: pd.DataFrame              # step, val_loss: the rows with an evaluation
    columns: tuple[str, ...]       # the header's columns
    rows_read: int = 0             # data lines parsed
    skipped: int = 0               # malformed lines ignored
    superseded: int = 0            # rows replaced by a resume
    resumes: int = 0               # times the step went back
    partial_tail: bool = False     # a last line without its newline was left out
    notes: list[str] = field(default_factory=list)

    @property
    def has_elapsed(self) -> bool:
        return "elapsed_s" in self.train and bool(self.train["elapsed_s"].notna().any())


def _header(line: bytes) -> Optional[tuple[str, ...]]:
    """The column names of a header line, or None if the line is data."""
    text = line.decode("utf-8", errors="replace").strip().lstrip("\ufeff")
    if not text or not (text[0].isalpha() or text[0] == "_"):
        return None
    return tuple(c.strip().lower() for c in text.split(","))


def _default_columns(n_fields: int) -> tuple[str, ...]:
    if n_fields in (6, 7):
        return FORGE_COLUMNS[:n_fields]
    raise ForgeFormatError(f"log.csv has no header and {n_fields} fields per line (Forge writes "
                           "6 or 7: step,loss,lr,grad_norm,tokens_per_sec,val_loss[,elapsed_s])")


def _read_block(body: bytes, columns: tuple[str, ...]) -> Optional[pd.DataFrame]:
    """Fast path: every line has len(columns) numeric fields. None when that is not so."""
    try:
        return pd.read_csv(io.BytesIO(body), header=None, names=list(columns), dtype=np.float64,
                           engine="c", skip_blank_lines=True)
    except (ValueError, pd.errors.ParserError):
        return None


def _slow_rows(lines: list[bytes], columns: tuple[str, ...]) -> tuple[pd.DataFrame, int]:
    """Line by line: honours repeated headers and 6/7-field lines; counts what it skips."""
    groups: dict[tuple[str, ...], tuple[list[int], list[bytes]]] = {}
    skipped = 0
    current = columns
    forge_like = columns == FORGE_COLUMNS[:len(columns)]
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        head = _header(line)
        if head is not None:
            if REQUIRED[0] in head and REQUIRED[1] in head:
                current = head
                forge_like = head == FORGE_COLUMNS[:len(head)]
            else:
                skipped += 1
            continue
        n = line.count(b",") + 1
        if n == len(current):
            cols = current
        elif forge_like and n in (6, 7):  # an old 6-column log resumed by a newer build, or back
            cols = FORGE_COLUMNS[:n]
        else:
            skipped += 1
            continue
        order, chunk = groups.setdefault(cols, ([], []))
        order.append(i)
        chunk.append(line)
    frames = []
    for cols, (order, chunk) in groups.items():
        df = pd.read_csv(io.BytesIO(b"\n".join(chunk)), header=None, names=list(cols), dtype=str,
                         engine="c", skip_blank_lines=False, keep_default_na=False)
        text = df.apply(lambda s: s.str.strip())
        num = text.apply(lambda s: pd.to_numeric(s, errors="coerce"))
        # a field that is not a number (nan/inf are numbers: a diverged loss) spoils its line
        garbage = (num.isna() & ~text.apply(lambda s: s.str.lower().isin(_NAN_WORDS))).any(axis=1)
        num["_order"] = order
        frames.append(num.loc[~garbage.to_numpy()])
        skipped += int(garbage.sum())
    if not frames:
        return pd.DataFrame(columns=[*columns, "_order"]), skipped
    out = pd.concat(frames, ignore_index=True).sort_values("_order", kind="stable")
    bad = out["step"].isna()
    return out.loc[~bad].reset_index(drop=True), skipped + int(bad.sum())


def _resolve_resumes(steps: np.ndarray) -> tuple[np.ndarray, int]:
    """Mask of the rows to keep: a row survives unless a later row has a step <= its own."""
    n = len(steps)
    if n == 0:
        return np.ones(0, dtype=bool), 0
    later_min = np.empty(n, dtype=np.float64)
    later_min[-1] = np.inf
    if n > 1:
        later_min[:-1] = np.minimum.accumulate(steps[::-1])[::-1][1:]
    resumes = int(np.count_nonzero(np.diff(steps) <= 0)) if n > 1 else 0
    return steps < later_min, resumes


def _join_elapsed(elapsed: np.ndarray) -> np.ndarray:
    """Make elapsed_s keep growing across resumes (it restarts at each one)."""
    e = np.asarray(elapsed, dtype=np.float64)
    if len(e) < 2:
        return e
    prev = e[:-1]
    reset = np.diff(e) < 0
    offset = np.concatenate([[0.0], np.cumsum(np.where(reset, prev, 0.0))])
    return e + offset


def parse_log_csv(data: bytes | str) -> ForgeLog:
    """Parse the bytes of a Forge log.csv (see the module docstring for the rules)."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    notes: list[str] = []
    partial = False
    if data and not data.endswith(b"\n"):
        cut = data.rfind(b"\n")
        data, partial = (data[:cut + 1] if cut >= 0 else b""), True
        notes.append("the last line has no newline yet (being written): left for the next read")
    if b"\r" in data:
        data = data.replace(b"\r\n", b"\n")
    start = 0
    while start < len(data) and data[start:start + 1] in (b"\n", b" ", b"\t"):
        start += 1
    if start >= len(data):
        empty = pd.DataFrame(columns=["step", "loss", "lr", "grad_norm", "tokens_per_sec", "elapsed_s"])
        return ForgeLog(empty, pd.DataFrame(columns=["step", "val_loss"]), FORGE_COLUMNS, 0, 0, 0,
                        0, partial, notes + ["log.csv has no rows yet"])
    end = data.find(b"\n", start)
    first = data[start:end]
    columns = _header(first)
    if columns is None:  # no header: the documented order, by field count
        columns = _default_columns(first.count(b",") + 1)
        body = data[start:]
        notes.append("log.csv has no header; read as " + ",".join(columns))
    else:
        body = data[end + 1:]
    missing = [c for c in REQUIRED if c not in columns]
    if missing:
        raise ForgeFormatError(f"log.csv header {','.join(columns)!r} lacks {', '.join(missing)} "
                               "(not a Forge log?)")
    n_lines = body.count(b"\n")
    # fast path when every line has the header's field count (a repeated header or any other
    # text makes the float parse fail and falls through to the line-by-line path)
    uniform = (body.count(b",") == n_lines * (len(columns) - 1) and b"\n\n" not in body
               and not body.startswith(b"\n"))
    df = _read_block(body, columns) if uniform and n_lines else None
    skipped = 0
    if df is None:
        df, skipped = _slow_rows(body.split(b"\n"), columns)
        if skipped:
            notes.append(f"{skipped} malformed line(s) skipped")
    else:
        bad = df["step"].isna()
        if bad.any():
            skipped = int(bad.sum())
            df = df.loc[~bad]
    rows_read = len(df)
    steps = df["step"].to_numpy(dtype=np.float64)
    keep, resumes = _resolve_resumes(steps)
    superseded = int(np.count_nonzero(~keep))
    if resumes:
        notes.append(f"{resumes} resume(s): {superseded} earlier row(s) superseded by the resumed run")
    df = df.loc[keep].reset_index(drop=True)
    train = pd.DataFrame({"step": df["step"].to_numpy(dtype=np.int64)})
    for col in ("loss", "lr", "grad_norm", "tokens_per_sec"):
        train[col] = df[col].to_numpy(dtype=np.float64) if col in df else np.nan
    train["elapsed_s"] = (_join_elapsed(df["elapsed_s"].to_numpy(dtype=np.float64))
                          if "elapsed_s" in df else np.nan)
    if "val_loss" in df:
        v = df["val_loss"].to_numpy(dtype=np.float64)
        has = np.isfinite(v) & (v >= 0)
        val = pd.DataFrame({"step": train["step"].to_numpy()[has], "val_loss": v[has]})
    else:
        val = pd.DataFrame({"step": np.zeros(0, dtype=np.int64), "val_loss": np.zeros(0)})
    return ForgeLog(train, val, tuple(columns), rows_read, skipped, superseded, resumes, partial,
                    notes)


# == folders ====================================================================================
@dataclass(frozen=True)
class ForgeCheckpoint:
    name: str
    step: Optional[int]     # None for ckpt_latest.bin
    size: int
    mtime: float


def list_checkpoints(folder: Path) -> list[ForgeCheckpoint]:
    """ckpt_NNNNNN.bin by step, then ckpt_latest.bin (if present)."""
    out, latest = [], None
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return []
    for entry in entries:
        m = CKPT_RE.match(entry.name)
        if not (m or entry.name == LATEST_NAME):
            continue
        try:
            if not entry.is_file():
                continue
            st = entry.stat()
        except OSError:
            continue
        ck = ForgeCheckpoint(entry.name, int(m.group(1)) if m else None, st.st_size, st.st_mtime)
        if m:
            out.append(ck)
        else:
            latest = ck
    out.sort(key=lambda c: c.step)
    return out + ([latest] if latest else [])


def _forge_header(path: Path) -> bool:
    """log.csv starts with Forge's own header (step,loss,lr,grad_norm,...)."""
    try:
        with open(path / LOG_NAME, "rb") as fh:
            first = fh.read(256).split(b"\n", 1)[0].decode("ascii", "replace").strip()
    except OSError:
        return False
    return tuple(first.split(",")[:4]) == FORGE_COLUMNS[:4]


def is_forge_dir(path: Path, need_checkpoint: bool = True) -> bool:
    """A Forge run: log.csv, ckpt_*.bin (or model.forge/), and neither status.json nor
    config.yaml (those make it one of our runs). Before its first checkpoint a run counts when
    its log.csv has Forge's header. `need_checkpoint=False` for folders the user opens
    explicitly (any Forge-shaped log)."""
    try:
        if not path.is_dir() or not (path / LOG_NAME).is_file():
            return False
        if (path / "status.json").exists() or (path / "config.yaml").exists():
            return False
        if not need_checkpoint:
            return True
        return (path / "model.forge").is_dir() or any(
            CKPT_RE.match(n) or n == LATEST_NAME for n in os.listdir(path)) or _forge_header(path)
    except OSError:
        return False


def flatten(data: Any, prefix: str = "") -> dict[str, Any]:
    """Nested dicts -> {"a.b.c": value}; lists become tuples (hashable, comparable)."""
    out: dict[str, Any] = {}
    if isinstance(data, dict):
        for k, v in data.items():
            out.update(flatten(v, f"{prefix}{k}."))
    else:
        out[prefix[:-1]] = tuple(data) if isinstance(data, list) else data
    return out


class ForgeRun:
    """One Forge run folder, read-only. `key` is its value in the run selectors."""

    def __init__(self, path: Path, key: str):
        self.path, self.key = Path(path), key

    def __repr__(self) -> str:
        return f"ForgeRun({str(self.path)!r})"

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def label(self) -> str:
        return self.name + LABEL_SUFFIX

    @property
    def log_path(self) -> Path:
        return self.path / LOG_NAME

    def checkpoints(self) -> list[ForgeCheckpoint]:
        return list_checkpoints(self.path)

    def signature(self) -> Optional[tuple[int, int]]:
        try:
            st = self.log_path.stat()
        except OSError:
            return None
        return st.st_size, st.st_mtime_ns

    def log_age(self) -> Optional[float]:
        try:
            return max(0.0, time.time() - self.log_path.stat().st_mtime)
        except OSError:
            return None

    def read_log(self) -> ForgeLog:
        """The parsed log.csv, re-read only when the file changed (LRU cache)."""
        sig = self.signature()
        if sig is None:
            raise ForgeFormatError(f"{self.log_path}: no such file")
        return _LOG_CACHE.get(str(self.log_path), sig, lambda: _read_file(self.log_path))

    def config(self) -> dict[str, Any]:
        """The flattened Forge config, if a copy of the --config JSON sits in the folder."""
        for name in CONFIG_NAMES:
            p = self.path / name
            try:
                if p.is_file() and p.stat().st_size <= MAX_CONFIG_BYTES:
                    return flatten(json.loads(p.read_text(encoding="utf-8")))
            except (OSError, ValueError):
                return {}
        return {}

    def tokens_per_step(self) -> Optional[int]:
        """batch_size x context_length x grad_accum_steps, when the config is known."""
        cfg = self.config()
        if not cfg:
            return None
        try:
            return int(cfg.get("train.batch_size", 32)) * int(cfg.get("model.context_length", 512)) \
                * int(cfg.get("train.grad_accum_steps", 1))
        except (TypeError, ValueError):
            return None

    def status_label(self) -> str:
        age = self.log_age()
        if age is None:
            return "Forge, read-only (no log.csv)"
        return f"Forge, read-only (log.csv written {_ago(age)} ago)"


def _ago(seconds: float) -> str:
    s = int(seconds)
    if s < 120:
        return f"{s} s"
    if s < 7200:
        return f"{s // 60} min"
    if s < 172800:
        return f"{s // 3600} h"
    return f"{s // 86400} d"


def _read_file(path: Path) -> ForgeLog:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ForgeFormatError(f"{path} cannot be read ({exc.strerror or exc})") from None
    return parse_log_csv(data)


class _Cache:
    """A small thread-safe LRU: key -> (signature, value); stale signatures are rebuilt."""

    def __init__(self, size: int = 16):
        self.size = size
        self._lock = threading.Lock()
        self._items: dict[str, tuple[Any, Any]] = {}

    def get(self, key: str, sig: Any, build):
        with self._lock:
            hit = self._items.get(key)
            if hit is not None and hit[0] == sig:
                self._items[key] = self._items.pop(key)  # most recently used last
                return hit[1]
        value = build()
        with self._lock:
            self._items.pop(key, None)
            self._items[key] = (sig, value)
            while len(self._items) > self.size:
                self._items.pop(next(iter(self._items)))
        return value


_LOG_CACHE = _Cache()


# == where Forge runs come from =================================================================
class ForgeRegistry:
    """Forge folders opened by path (outside the runs folder) in this cockpit; with `store`, a
    JSON file they are kept in, so a restarted cockpit lists them again (those that are still
    Forge runs)."""

    def __init__(self, store: Optional[Path] = None):
        self._lock = threading.Lock()
        self._store = Path(store) if store is not None else None
        self._paths: list[Path] = []
        if self._store is not None:
            try:
                saved = json.loads(self._store.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                saved = []
            for p in saved if isinstance(saved, list) else []:
                if isinstance(p, str) and is_forge_dir(Path(p), need_checkpoint=False):
                    self._paths.append(Path(p))

    def add(self, path: Path) -> Path:
        path = Path(path).resolve()
        with self._lock:
            if path not in self._paths:
                self._paths.append(path)
                if self._store is not None:
                    try:
                        atomic_write_text(self._store, json.dumps([str(p) for p in self._paths]))
                    except OSError:
                        pass   # remembered for this session only
        return path

    def paths(self) -> list[Path]:
        with self._lock:
            return list(self._paths)


REGISTRY_KEY = "UMOEC_FORGE_REGISTRY"
OPENED_FILE = ".forge_opened.json"      # in the runs folder: Forge folders opened by path


def registry() -> Optional[ForgeRegistry]:
    """The serving app's registry (inside a request), else None."""
    try:
        from flask import current_app, has_app_context
        if has_app_context():
            return current_app.config.get(REGISTRY_KEY)
    except ImportError:  # pragma: no cover - flask ships with dash
        pass
    return None


def external_key(path: Path) -> str:
    return KEY_PREFIX + str(Path(path).resolve())


def open_path(text: Optional[str], reg: Optional[ForgeRegistry], base: Optional[Path] = None) -> ForgeRun:
    """Open a Forge run folder typed by the user (read-only); ForgeFormatError says why not."""
    text = (text or "").strip()
    if not text:
        raise ForgeFormatError("type the path of a Forge run folder (the --out folder of forge train)")
    if "\x00" in text:
        raise ForgeFormatError("the path contains a NUL character")
    path = Path(os.path.expanduser(text))
    if not path.is_absolute():
        path = (base or Path.cwd()) / path
    if path.is_file() and path.name == LOG_NAME:
        path = path.parent
    if not path.is_dir():
        raise ForgeFormatError(f"{path}: no such folder")
    if (path / "status.json").exists() or (path / "config.yaml").exists():
        raise ForgeFormatError(f"{path} is a u-moec-tiny run folder, not a Forge one: put it in the "
                               "runs folder to see it")
    if not (path / LOG_NAME).is_file():
        raise ForgeFormatError(f"{path} has no log.csv: not a Forge run folder")
    run = ForgeRun(path.resolve(), external_key(path))
    run.read_log()  # refuse now, with the reason, rather than on every refresh
    if reg is None:
        raise ForgeFormatError("no cockpit is serving: nothing to open the run in")
    reg.add(path)
    return run


def forge_runs(runs_dir: Path, reg: Optional[ForgeRegistry] = None) -> list[ForgeRun]:
    """Forge folders directly inside the runs folder, then those opened by path."""
    out: list[ForgeRun] = []
    root = Path(runs_dir)
    try:
        entries = sorted((p for p in root.iterdir() if p.is_dir()), key=lambda p: p.name)
    except OSError:
        entries = []
    for p in entries:
        if is_forge_dir(p):
            out.append(ForgeRun(p, p.name))
    reg = reg if reg is not None else registry()
    for p in (reg.paths() if reg else []):
        if is_forge_dir(p, need_checkpoint=False):
            out.append(ForgeRun(p, external_key(p)))
    return out


def forge_options(runs_dir: Path, reg: Optional[ForgeRegistry] = None) -> list[dict]:
    """Run-selector options of the Forge runs, each labelled '(Forge, read-only)'."""
    return [{"label": r.label, "value": r.key} for r in forge_runs(runs_dir, reg)]


def not_usable_here(runs_dir: Path, key: Optional[str], what: str) -> Optional[str]:
    """Why `what` (compression, evaluation, generation) cannot use a selected Forge run, or None
    when the key is not a Forge run."""
    run = resolve_forge(runs_dir, key)
    if run is None:
        return None
    return (f"{run.label} is a Forge run: its checkpoints are Forge's own format, which this "
            f"cockpit reads for charts only and cannot load as a model, so {what} cannot use "
            "it. Select one of this project's runs for that.")


def resolve_forge(runs_dir: Path, key: Optional[str],
                  reg: Optional[ForgeRegistry] = None) -> Optional[ForgeRun]:
    """The Forge run a selector value names: a folder directly inside runs_dir, or one opened by
    path in this cockpit (never any other path)."""
    if not key:
        return None
    if key.startswith(KEY_PREFIX):
        reg = reg if reg is not None else registry()
        path = Path(key[len(KEY_PREFIX):])
        if reg is None or path not in reg.paths() or not is_forge_dir(path, need_checkpoint=False):
            return None
        return ForgeRun(path, key)
    if "/" in key or "\\" in key or key in (".", ".."):
        return None
    path = Path(runs_dir) / key
    return ForgeRun(path, key) if is_forge_dir(path) else None
