"""Process settings for the coding loop: allocator pages kept, cyclic garbage collection paused.

Allocator (glibc only). Every step of the codec allocates and frees the same few hundred-kilobyte to megabyte
temporaries (numpy's frequency tables, torch's activations and SSM-state temporaries). With
glibc's defaults, blocks that large are mmap'ed and munmap'ed, or the heap top is trimmed, so
each step pays fresh page faults on them: `distances_to_freqs` at B = 256 took 760 us instead
of 220 us, and turbo coding was 5-10% slower (measured in docs/compress.md). Raising the mmap
and trim thresholds keeps those pages mapped and reused. Process-wide and harmless elsewhere:
at most TRIM_THRESHOLD bytes of freed memory stay with the process. No-op where the C library
has no `mallopt` (macOS, Windows, musl).

Garbage collection. A step allocates hundreds of Python objects (tensors, arrays), so the cyclic
collector keeps running its generational passes over everything the process holds (the model,
torch's modules, ...). The loop creates no reference cycles worth collecting; pausing the collector
while it runs made turbo coding ~5% faster (docs/compress.md). It is switched back on afterwards.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import gc
from contextlib import contextmanager

M_TRIM_THRESHOLD, M_TOP_PAD, M_MMAP_THRESHOLD = -1, -2, -3
MMAP_THRESHOLD = 32 << 20       # glibc's largest allowed value (HEAP_MAX / 2 on 64-bit)
TRIM_THRESHOLD = 256 << 20
TOP_PAD = 64 << 20

_done = False


def keep_pages() -> bool:
    """Raise glibc's mmap/trim thresholds once per process; True when they were set."""
    global _done
    if _done:
        return True
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    _done = all(mallopt(param, value) == 1 for param, value in (
        (M_MMAP_THRESHOLD, MMAP_THRESHOLD), (M_TRIM_THRESHOLD, TRIM_THRESHOLD),
        (M_TOP_PAD, TOP_PAD)))
    return _done


@contextmanager
def paused_gc():
    """Pause the cyclic garbage collector for the duration (restored even on errors)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
