"""Process settings for the coding loop (umoec/compress/runtime.py)."""
import ctypes
import ctypes.util
import gc

import pytest

from umoec.compress import runtime


def test_keep_pages_sets_glibc_thresholds_once():
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.mallopt  # noqa: B018
    except (OSError, AttributeError):
        pytest.skip("no glibc mallopt here: keep_pages is a no-op by design")
    assert runtime.keep_pages() is True
    assert runtime.keep_pages() is True        # idempotent
    big = bytearray(8 << 20)                      # allocations still work afterwards
    assert len(big) == 8 << 20


def test_paused_gc_restores_the_collector_even_on_errors():
    assert gc.isenabled()
    with runtime.paused_gc():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(RuntimeError), runtime.paused_gc():
        raise RuntimeError("boom")
    assert gc.isenabled()
    gc.disable()
    try:
        with runtime.paused_gc():
            pass
        assert not gc.isenabled()        # a caller's own choice is kept
    finally:
        gc.enable()
