"""The page's pulse: one cheap request per refresh tick saying whether anything a page shows may
have changed (gui/pages/header/ticks.py routes it to the visible tab). Its signature covers every
run's state (the watchdog's version), the selected run's folder and the datasets folder (top-level
entries, not SQLite's reader-written -shm), runs starting here, and a 30 s time bucket; while a
job of this cockpit runs it changes at every tick (progress moves in memory, not in files).
"""
from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

SAFETY_S = 30.0
# SQLite's shared-memory index is written by readers too (the pages' own reads would count as news)
READER_WRITTEN = ("-shm",)


def folder_entries(folder: Path | None) -> list[tuple]:
    """(name, size, mtime_ns) of each top-level entry of `folder`; [] when it cannot be read."""
    if folder is None:
        return []
    out = []
    try:
        with os.scandir(folder) as it:
            for entry in it:
                try:
                    if not entry.name.endswith(READER_WRITTEN):
                        st = entry.stat(follow_symlinks=False)
                        out.append((entry.name, st.st_size, st.st_mtime_ns))
                except OSError:
                    continue
    except OSError:
        return []
    return sorted(out)


def any_busy(jobs: Any = None, builder: Any = None) -> bool:
    """True while a compression/evaluation job or a dataset build of this cockpit is running."""
    return bool(jobs is not None and jobs.any_running()) or bool(builder is not None and builder.building())


def signature(watch_version: int, run_folder: Path | None, data_dir: Path | None,
              pending: Iterable[str] = (), busy: bool = False, now: float | None = None) -> str:
    """A short hex digest that changes whenever what the pages show may have changed."""
    now = time.time() if now is None else now
    if busy:
        return f"busy-{time.monotonic_ns():x}"
    parts = (watch_version, str(run_folder), folder_entries(run_folder),
             folder_entries(data_dir), sorted(pending), int(now // SAFETY_S))
    return hashlib.blake2b(repr(parts).encode(), digest_size=8).hexdigest()
