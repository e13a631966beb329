"""A terminal progress bar with bytes/s, drawn on stderr only when it is a terminal."""
from __future__ import annotations

import sys
import time


class ProgressBar:
    def __init__(self, label: str, stream=None, width: int = 30):
        self.label, self.width = label, width
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty()
        self.t0 = time.perf_counter()
        self._last = 0.0

    def __call__(self, done: int, total: int) -> None:
        now = time.perf_counter()
        if not self.enabled or (now - self._last < 0.1 and done < total):
            return
        self._last = now
        frac = done / total if total else 1.0
        rate = done / max(1e-9, now - self.t0)
        bar = "#" * int(frac * self.width)
        self.stream.write(f"\r{self.label} [{bar:<{self.width}}] {frac:6.1%} "
                          f"{done:,}/{total:,} B {rate:,.0f} B/s")
        self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self.stream.write("\n")
            self.stream.flush()
