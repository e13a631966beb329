"""Graceful stop: SIGTERM/SIGINT set a flag; the step loop finishes its step, checkpoints and
exits 0 with status `stopped` (the trainer and the simulator share this)."""
from __future__ import annotations

import signal

_early: int | None = None       # a SIGTERM that arrived before the step loop was ready


def catch_early() -> None:
    """Hold a SIGTERM that arrives while the process is still starting (imports, data, model): the
    step loop then stops at its first step, checkpointed, instead of the process dying half-born.
    The entry points call this first thing; SIGINT (Ctrl-C) keeps interrupting at once."""
    def hold(signum, _frame):
        global _early
        _early = signum
    signal.signal(signal.SIGTERM, hold)


class StopFlag:
    """Context manager installing the handlers; `signal` is the number received, if any."""

    def __init__(self) -> None:
        self.signal: int | None = None
        self._old: dict = {}

    def __enter__(self) -> StopFlag:
        for sig in (signal.SIGTERM, signal.SIGINT):
            self._old[sig] = signal.signal(sig, self._handle)
        if _early is not None and self.signal is None:   # asked to stop while starting
            self.signal = _early
        return self

    def _handle(self, signum, _frame) -> None:
        self.signal = signum

    def __exit__(self, *exc) -> None:
        for sig, old in self._old.items():
            signal.signal(sig, old)
