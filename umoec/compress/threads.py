"""How many threads coding may use, chosen from the machine's load before numpy/torch load.

The exact engine's results never depend on the thread count (umoec/engine/fixed.py), so this is
only about speed: a coding's streams are split over `threads` processes (umoec/engine/split.py:
two processes code turbo ~1.4x and fast ~1.2x as fast as one, bench_split); with fewer than 32
streams per process (balanced) the compiled SSM mixer splits them over `threads` threads.
Several pay only when that many cores are idle; a spinning thread pool next to a busy core
collapses (measured with torch's OpenMP pool: 31,000 B/s idle, 9,000 with the other core busy; the
engine's threads do not spin). `plan` chooses from a short CPU-load sample; `prepare` sets the
variables the libraries read once, when loaded: the CLIs and the cockpit's worker call it before
importing numpy. A user's own settings are respected, and an explicit count (-T/--threads) is used
as given.
"""
from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

SAMPLE_S = 0.05         # how long the CPU load is sampled before choosing (10 ms ticks)
IDLE_MARGIN = 0.5       # a core counts as free when others use less than half of it


@dataclass(frozen=True)
class ThreadPlan:
    threads: int
    passive: bool        # OpenMP's idle threads should sleep (OMP_WAIT_POLICY=PASSIVE)
    reason: str


def available_cpus() -> int:
    """CPUs this process may run on (its affinity mask where the OS has one)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def busy_cores(sample_s: float = SAMPLE_S) -> float:
    """Cores in use over a short sample (this process sleeps meanwhile, so: by others)."""
    import psutil
    return psutil.cpu_percent(interval=sample_s) / 100.0 * (psutil.cpu_count() or 1)


def _env_threads(env: Mapping[str, str]) -> int | None:
    try:
        n = int(env.get("OMP_NUM_THREADS", ""))
    except ValueError:
        return None
    return n if n >= 1 else None


def plan(wanted: int, *, fixed: bool = False, busy: float | None = None,
         cpus: int | None = None, env: Mapping[str, str] = os.environ) -> ThreadPlan:
    """The thread count and wait policy for coding with `wanted` threads.

    fixed: `wanted` is binding (the user's --threads, or the count a .umc file records); only the
    wait policy is chosen. Otherwise `wanted` is an upper bound (a profile's count), lowered to
    OMP_NUM_THREADS when set and to the cores idle right now. busy/cpus: for tests.
    """
    policy = env.get("OMP_WAIT_POLICY", "").strip().upper()
    if not fixed:
        cap = _env_threads(env)
        wanted = min(wanted, cap) if cap else wanted
        if policy == "PASSIVE" and wanted > 1:
            return ThreadPlan(1, True, "OMP_WAIT_POLICY=PASSIVE: several threads would be slower")
    if wanted <= 1:
        return ThreadPlan(1, True, "one thread")
    busy = busy_cores() if busy is None else busy
    free = (cpus or available_cpus()) - busy
    threads = wanted if fixed else max(1, min(wanted, int(free + IDLE_MARGIN)))
    if threads == 1:
        return ThreadPlan(1, True, f"{busy:.1f} cores busy: one thread")
    crowded = threads > free + IDLE_MARGIN
    passive = policy == "PASSIVE" or (crowded and policy != "ACTIVE")
    why = f"{threads} threads, {free:.1f} cores free" + (", idle threads sleep" if passive else "")
    return ThreadPlan(threads, passive, why)


BLAS_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
ENGINE_VAR = "UMOEC_ENGINE_THREADS"


def prepare(wanted: int, *, fixed: bool = False) -> ThreadPlan:
    """`plan`, then the engine's count (UMOEC_ENGINE_THREADS: the processes sharing the
    streams, or the compiled SSM mixer's threads) and one thread for the BLAS (its pool is slower than one
    thread on products this small: turbo 18.3k vs 20.9k B/s measured), unless the user set
    them; an explicit count (fixed) is used as given. Effective only before numpy is imported."""
    p = plan(wanted, fixed=fixed)
    if fixed:
        os.environ[ENGINE_VAR] = str(p.threads)
    else:
        os.environ.setdefault(ENGINE_VAR, str(p.threads))
    for var in BLAS_VARS:
        os.environ.setdefault(var, "1")
    if p.passive:
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    return p
