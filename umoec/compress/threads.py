"""How many torch threads coding runs, and whether OpenMP's idle threads spin or sleep.

The decoder must run the encoder's thread count (it is in the .umc header), and the best count
depends on the machine's load at that moment. Measured on the reference 2-core machine (turbo,
256 streams, tier1_micro, 100 KB; docs/compress.md):

    bytes/s                      idle machine    the other core busy
    1 thread                         25,000           25,000
    2 threads, spinning (default)    31,000            9,000
    2 threads, PASSIVE               15,000           20,000

So several threads pay only when that many cores are idle and OpenMP may spin; otherwise one
thread (and PASSIVE, so a library thread pool never spins against a training run). `plan` makes
that choice from a short CPU-load sample; `prepare` also sets OMP_WAIT_POLICY, which OpenMP reads
once, when torch is imported: the CLIs and the cockpit's worker call it before importing torch.
A user's OMP_WAIT_POLICY or OMP_NUM_THREADS is respected, and an explicit thread count (--threads,
or a file's recorded count) is never changed, only its wait policy chosen.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Mapping, Optional

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


def _env_threads(env: Mapping[str, str]) -> Optional[int]:
    try:
        n = int(env.get("OMP_NUM_THREADS", ""))
    except ValueError:
        return None
    return n if n >= 1 else None


def plan(wanted: int, *, fixed: bool = False, busy: Optional[float] = None,
         cpus: Optional[int] = None, env: Mapping[str, str] = os.environ) -> ThreadPlan:
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


def prepare(wanted: int, *, fixed: bool = False) -> ThreadPlan:
    """`plan`, and OMP_WAIT_POLICY=PASSIVE when the plan wants it and the user set no policy.
    Effective only before torch is imported."""
    p = plan(wanted, fixed=fixed)
    if p.passive:
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    return p


def prepare_for_file(umc_path) -> Optional[ThreadPlan]:
    """`prepare` for decoding: the thread count recorded in a .umc file's header is binding.
    None when the header cannot be read (decoding then reports why)."""
    from ..codec import CodecError, read_header
    from ..codec.container import MAX_HEADER
    try:
        with open(umc_path, "rb") as fh:
            head = fh.read(MAX_HEADER)
        return prepare(read_header(head).threads, fixed=True)
    except (OSError, CodecError):
        return None
