"""glibc allocator thresholds for the step loop (umoec/compress/allocator.py)."""
import ctypes
import ctypes.util

import pytest

from umoec.compress import allocator


def test_keep_pages_sets_glibc_thresholds_once():
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.mallopt  # noqa: B018
    except (OSError, AttributeError):
        pytest.skip("no glibc mallopt here: keep_pages is a no-op by design")
    assert allocator.keep_pages() is True
    assert allocator.keep_pages() is True        # idempotent
    big = bytearray(8 << 20)                      # allocations still work afterwards
    assert len(big) == 8 << 20
