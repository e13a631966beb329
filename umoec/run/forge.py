"""Forge run folders, read-only: log.csv parsed (umoec.run.csvlog), ckpt_*.bin listed.

A Forge run folder (Forge Studio's RESEARCH.md, sections 3 and 4) holds
    log.csv              step,loss,lr,grad_norm,tokens_per_sec,val_loss[,elapsed_s]
    ckpt_%06d.bin        every checkpoint_every steps, plus the final one
    ckpt_latest.bin      a copy of the newest checkpoint
    model.forge/         (optional) content-addressed weights
and no status.json (that is how it differs from our run folders).

log.csv is the format our runs write too: umoec.run.csvlog is its one reader (the rules for
headers, resumes, partial lines and malformed lines are documented there).

Loss is Forge's cross-entropy in nats per *token*, so its "bits" are bits per token, not per byte;
the cockpit labels them so. Nothing here writes to a Forge folder.
"""
from __future__ import annotations

import json
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .csvlog import CSV_COLUMNS, CsvLogError, ParsedCsvLog, read_log_csv
from .layout import RunDir

LOG_NAME = "log.csv"
FORGE_COLUMNS = CSV_COLUMNS     # Forge's log.csv is the format our runs write
CKPT_RE = re.compile(r"^ckpt_(\d+)\.bin$")
LATEST_NAME = "ckpt_latest.bin"
CONFIG_NAMES = ("config.json", "forge_config.json")  # optional copy of the --config JSON
LABEL_SUFFIX = " (Forge, read-only)"
MAX_CONFIG_BYTES = 1 << 20

# A Forge log is a log.csv: its parser's names, and one error for an unreadable log or a folder
# that is not a Forge run (callers catch one name).
ForgeLog = ParsedCsvLog
ForgeFormatError = CsvLogError


# == folders ====================================================================================
@dataclass(frozen=True)
class ForgeCheckpoint:
    name: str
    step: int | None     # None for ckpt_latest.bin
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
        if RunDir(path).exists():
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

    def signature(self) -> tuple[int, int] | None:
        try:
            st = self.log_path.stat()
        except OSError:
            return None
        return st.st_size, st.st_mtime_ns

    def log_age(self) -> float | None:
        try:
            return max(0.0, time.time() - self.log_path.stat().st_mtime)
        except OSError:
            return None

    def read_log(self) -> ForgeLog:
        """The parsed log.csv (the cockpit's runs cache it by `signature`)."""
        return read_log_csv(self.log_path)

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

    def tokens_per_step(self) -> int | None:
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


def log_tail(path, n: int = 100, max_bytes: int = 64 * 1024) -> str:
    """The last `n` lines of a Forge run's log.csv (read from its last `max_bytes`)."""
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - max_bytes))
            lines = fh.read().decode("utf-8", errors="replace").splitlines()
    except OSError as exc:
        return f"(cannot read log.csv: {exc.strerror or exc})"
    if size > max_bytes and lines:
        lines = lines[1:]
    return "\n".join(lines[-n:]) or "(log.csv is empty)"


def log_text(path) -> str | None:
    """A Forge run's whole log.csv (for download), None when it is missing or unreadable."""
    try:
        return Path(path).read_text(errors="replace")
    except OSError:
        return None
