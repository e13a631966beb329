"""The page's pulse: one small request per refresh tick that says whether anything a page shows
may have changed, so an idle page with finished runs costs one cheap request per tick instead of
one per callback (gui/pages/header/ticks.py routes a changed pulse to the visible tab).

The signature covers what the pages read:
- every run's state, step and heartbeat (the watchdog's version: gui/services/watchdog.py);
- the selected run's folder (metrics.db and its WAL but not the -shm index readers write,
  status.json, logs, log.csv, the checkpoints/
  and compressed/ folders): name, size and mtime of each top-level entry, one scandir;
- the datasets folder's entries (a dataset built from the command line appears);
- runs started here that have no status yet;
- a 30 s time bucket, so time-derived text ("3 min ago") and anything not listed above is never
  more than 30 s old.
While this cockpit runs a job (compression, verification, evaluation, export, dataset build) the
signature is new at every tick: progress moves in memory, not in files.
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
                if entry.name.endswith(READER_WRITTEN):
                    continue
                try:
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                out.append((entry.name, st.st_size, st.st_mtime_ns))
    except OSError:
        return []
    out.sort()
    return out


def any_busy(jobs: Any = None, builder: Any = None) -> bool:
    """True while a compression/evaluation job or a dataset build of this cockpit is running."""
    if jobs is not None and jobs.any_running():
        return True
    return builder is not None and bool(builder.building())


def signature(watch_version: int, run_folder: Path | None, data_dir: Path | None,
              pending: Iterable[str] = (), busy: bool = False,
              now: float | None = None) -> str:
    """A short hex digest that changes whenever what the pages show may have changed."""
    now = time.time() if now is None else now
    if busy:
        return f"busy-{time.monotonic_ns():x}"
    parts = (watch_version, str(run_folder), folder_entries(run_folder),
             folder_entries(data_dir), sorted(pending), int(now // SAFETY_S))
    return hashlib.blake2b(repr(parts).encode(), digest_size=8).hexdigest()
