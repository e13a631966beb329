"""How many CPU threads training uses: chosen from the machine's load, and re-chosen while it runs.

Torch's OpenMP pool needs every thread at each parallel region's barrier; when another process
takes a core, the thread that waits for it stalls the step (tier1_micro on 2 cores, measured with
bench/bench_train_load.py: 12,100 B/s idle with 2 threads, 1,400 B/s beside one CPU-bound
process; with 1 thread 7,200 and 7,500). So `hardware.threads: 0` (auto) starts with the cores
idle now and, every INTERVAL_S, compares the CPU time the rest of the machine used with the cores
there are: one core taken by others means one thread fewer; freed, back up. The trainer applies a
change between steps (torch.set_num_threads acts on the calling thread). OMP_NUM_THREADS, or
hardware.threads > 0, fixes the count: then a run's numbers do not depend on the load.
"""
from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

INTERVAL_S = 5.0      # seconds between two looks at the load
IDLE_MARGIN = 0.5     # a core counts as free while others use less than half of it


def available_cpus() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _cpu_seconds() -> tuple[float, float]:
    """(busy CPU seconds of the whole machine, CPU seconds of this process) so far."""
    import psutil
    t = psutil.cpu_times()
    busy = t.user + t.nice + t.system + getattr(t, "irq", 0.0) + getattr(t, "softirq", 0.0) + \
        getattr(t, "steal", 0.0)
    mine = psutil.Process().cpu_times()
    return busy, mine.user + mine.system


@dataclass(frozen=True)
class Change:
    threads: int
    others: float         # cores the rest of the machine used over the last interval

    def text(self, before: int) -> str:
        return (f"threads {before} -> {self.threads}: other processes used {self.others:.1f} "
                f"of {available_cpus()} cores")


def fixed_threads(setting: int, env: Mapping[str, str] = os.environ) -> int | None:
    """The user's thread count (hardware.threads > 0, else OMP_NUM_THREADS), or None: auto."""
    if setting > 0:
        return setting
    try:
        n = int(env.get("OMP_NUM_THREADS", ""))
    except ValueError:
        return None
    return n if n >= 1 else None


class ThreadGovernor:
    """Chooses the thread count from the load; `poll()` between steps returns a Change or None."""

    def __init__(self, setting: int = 0, *, cpus: int | None = None,
                 env: Mapping[str, str] = os.environ,
                 clock: Callable[[], float] = time.monotonic,
                 cpu_seconds: Callable[[], tuple[float, float]] = _cpu_seconds,
                 interval_s: float = INTERVAL_S):
        self.cpus = cpus or available_cpus()
        fixed = fixed_threads(setting, env)
        self.auto = fixed is None
        self.threads = fixed if fixed is not None else self.cpus
        self._clock, self._cpu, self.interval_s = clock, cpu_seconds, interval_s
        self._t, self._busy, self._mine = clock(), *cpu_seconds()

    def describe(self) -> str:
        return (f"{self.threads} threads, chosen from the load every {self.interval_s:g} s"
                if self.auto else f"{self.threads} threads (fixed)")

    def start(self, others: float | None = None) -> int:
        """The count to begin with: the cores others leave free (a short sample, or `others`)."""
        if self.auto:
            if others is None:
                import psutil
                others = psutil.cpu_percent(interval=0.1) / 100.0 * (psutil.cpu_count() or 1)
            self.threads = self._choose(others)
        self._t, (self._busy, self._mine) = self._clock(), self._cpu()
        return self.threads

    def _choose(self, others: float) -> int:
        return max(1, min(self.cpus, int(self.cpus - others + IDLE_MARGIN)))

    def poll(self) -> Change | None:
        if not self.auto:
            return None
        now = self._clock()
        if now - self._t < self.interval_s:
            return None
        busy, mine = self._cpu()
        others = max(0.0, (busy - self._busy) - (mine - self._mine)) / (now - self._t)
        self._t, self._busy, self._mine = now, busy, mine
        want = self._choose(others)
        if want == self.threads:
            return None
        self.threads = want
        return Change(want, others)
