"""Classical baselines on the same bytes report honest sizes; strong peers run when installed
and are skipped with the reason otherwise; primed sizes are conditional sizes."""
import gzip

import pytest

from tests.umoec.codec.helpers import TEXT, pseudo_random_bytes
from umoec.codec import baselines as B
from umoec.codec.baselines import BASELINES, run_baselines


def test_every_baseline_roundtrips_and_compresses_text():
    results = run_baselines(TEXT, names=list(BASELINES))
    assert [r.name for r in results] == list(BASELINES) == ["gzip -9", "xz -9e", "zstd -19", "zstd -22",
                                                            "brotli -11"]
    for r in results:
        assert r.raw_bytes == len(TEXT) and 0 < r.bpb < 2 and r.compress_s >= 0
    assert results[0].packed_bytes == len(gzip.compress(TEXT, compresslevel=9, mtime=0))


def test_random_bytes_do_not_compress():
    for r in run_baselines(pseudo_random_bytes(5000), names=["gzip -9", "zstd -22"]):
        assert r.bpb > 7.9


@pytest.mark.parametrize("name", list(B.PEER_FACTORIES))
def test_each_strong_peer_roundtrips_or_says_why_it_is_missing(name):
    if name in B.skipped_peers():
        reason = B.skipped_peers()[name]
        assert "not installed" in reason or "no paq module" in reason
        with pytest.raises(KeyError, match="cannot run here"):
            B.run_baseline(name, TEXT)
        pytest.skip(f"{name}: {reason}")
    r = B.run_baseline(name, TEXT)
    assert r.name == name and r.raw_bytes == len(TEXT) and 0 < r.bpb < 3
    assert B.run_baseline(name, b"").raw_bytes == 0   # empty input round-trips too


def test_a_missing_peer_is_skipped_not_a_crash(monkeypatch):
    monkeypatch.setattr(B.shutil, "which", lambda *a, **k: None)
    B._peers.cache_clear()
    try:
        assert "zpaq -m5" not in B.available() and "bzip3" not in B.available()
        assert "Debian zpaq" in B.skipped_peers()["zpaq -m5"]
        assert [r.name for r in run_baselines(b"abc" * 100)][:5] == list(BASELINES)
    finally:
        B._peers.cache_clear()


def test_primed_size_is_the_conditional_size():
    prime = TEXT * 3
    r = B.run_primed("xz -9e", prime, TEXT)
    plain = B.run_baseline("xz -9e", TEXT)
    both = len(BASELINES["xz -9e"][0](prime + TEXT)) - len(BASELINES["xz -9e"][0](prime))
    assert r.name == "xz -9e primed" and r.raw_bytes == len(TEXT) and r.packed_bytes == both
    assert r.packed_bytes < plain.packed_bytes / 4   # seen before: almost free
