"""The cockpit's one cache (gui/services/cache.py): signature checks, stale values handed to the
builder, least recently used evicted, failed builds cache nothing."""
import threading

import pytest

from gui.services.cache import SignatureCache


def test_same_signature_hits_and_a_new_one_rebuilds_from_the_stale_value():
    cache, calls = SignatureCache(4), []

    def build(stale):
        calls.append(stale)
        return (stale or 0) + 1
    assert cache.get("run", ("db", 1), build) == 1
    assert cache.get("run", ("db", 1), build) == 1           # hit: no build
    assert cache.get("run", ("db", 2), build) == 2           # grown: built on top of the stale 1
    assert calls == [None, 1]


def test_least_recently_used_goes_first():
    cache = SignatureCache(2)
    cache.get("a", 0, lambda _: "A")
    cache.get("b", 0, lambda _: "B")
    cache.get("a", 0, lambda _: "not rebuilt")                # a is now the most recent
    cache.get("c", 0, lambda _: "C")                          # evicts b
    assert len(cache) == 2
    assert cache.get("a", 0, lambda _: "rebuilt") == "A"
    assert cache.get("b", 0, lambda _: "B again") == "B again"


def test_a_failed_build_caches_nothing():
    cache = SignatureCache(2)

    def boom(_):
        raise ValueError("unreadable")
    with pytest.raises(ValueError):
        cache.get("x", 1, boom)
    assert len(cache) == 0 and cache.get("x", 1, lambda _: 5) == 5
    with pytest.raises(ValueError):
        SignatureCache(0)


def test_threads_share_it():
    cache, errors = SignatureCache(8), []

    def work(i):
        try:
            for n in range(200):
                k = n % 10
                assert cache.get(k, k, lambda _, k=k: k * 2) == k * 2
        except AssertionError as exc:  # pragma: no cover - reported below
            errors.append(exc)
    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and len(cache) == 8
