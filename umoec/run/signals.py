"""Graceful stop: SIGTERM/SIGINT set a flag; the step loop finishes its step, checkpoints and
exits 0 with status `stopped` (the trainer and the simulator share this)."""
from __future__ import annotations

import signal
from typing import Optional


class StopFlag:
    """Context manager installing the handlers; `signal` is the number received, if any."""

    def __init__(self) -> None:
        self.signal: Optional[int] = None
        self._old: dict = {}

    def __enter__(self) -> "StopFlag":
        for sig in (signal.SIGTERM, signal.SIGINT):
            self._old[sig] = signal.signal(sig, self._handle)
        return self

    def _handle(self, signum, _frame) -> None:
        self.signal = signum

    def __exit__(self, *exc) -> None:
        for sig, old in self._old.items():
            signal.signal(sig, old)
