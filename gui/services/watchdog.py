"""The run watchdog: a server thread that keeps every run's honest state, with or without a browser.

Each pass rewrites dead 'running' statuses as crashed (notify.reconcile_dead_runs; not the
Launcher's runs) and takes every run's state (notify.snapshot); `version` goes up whenever a
run appears, goes, changes state or moves on, so pages ask for new data only then
(gui/services/pulse.py). The thread stops with `stop()`, or once its owner (the app's server)
is gone, so tests that build many apps leave no watchers behind.
"""
from __future__ import annotations

import logging
import threading
import time
import weakref
from pathlib import Path
from typing import Any

from . import notify

log = logging.getLogger(__name__)
PERIOD_S = 2.0


class RunWatchdog:
    def __init__(self, runs_dir: Path, launcher: Any = None, period_s: float = PERIOD_S):
        self.runs_dir, self.launcher, self.period_s = Path(runs_dir), launcher, float(period_s)
        self._lock = threading.Lock()
        self._snapshot: dict[str, dict] = {}
        self._moves: dict[str, tuple] | None = None
        self._version = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # -- one pass --------------------------------------------------------------------------------
    def check(self, now: float | None = None) -> int:
        """Reconcile dead runs, take the snapshot; returns the (possibly new) version."""
        snap = {}
        if self.runs_dir.is_dir():
            skip = ((lambda name: self.launcher.get(name) is not None)
                    if self.launcher is not None else None)
            notify.reconcile_dead_runs(self.runs_dir, notify.GONE_UNWATCHED, skip=skip)
            snap = notify.snapshot(self.runs_dir, now=now)
        # a change: state, step or heartbeat (not the detail, whose "for N s" grows while stalled)
        moves = {name: (e.get("state"), e.get("step"), e.get("at")) for name, e in snap.items()}
        with self._lock:
            self._snapshot = snap
            if moves != self._moves:
                self._moves = moves
                self._version += 1
            return self._version

    def current(self) -> tuple[int, dict[str, dict]]:
        """(version, {run: {"state", "step", "detail", "at"}}) of the latest pass (run one if none)."""
        with self._lock:
            if self._moves is not None:
                return self._version, dict(self._snapshot)
        self.check()
        return self.current()

    @property
    def version(self) -> int:
        return self.current()[0]

    # -- the thread ------------------------------------------------------------------------------
    def start(self, owner: Any = None) -> RunWatchdog:
        """Run passes in a daemon thread until stop(), or until `owner` is garbage-collected."""
        if self._thread is not None:
            return self
        alive = weakref.ref(owner) if owner is not None else (lambda: True)
        self._thread = threading.Thread(target=self._loop, args=(alive,), daemon=True,
                                        name=f"run-watchdog:{self.runs_dir.name}")
        self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    def _loop(self, alive) -> None:
        while alive() is not None and not self._stop.is_set():
            started = time.monotonic()
            try:
                self.check()
            except Exception:  # a damaged folder must not end the watching of the others
                log.exception("run watchdog pass failed in %s", self.runs_dir)
            self._stop.wait(max(0.05, self.period_s - (time.monotonic() - started)))
