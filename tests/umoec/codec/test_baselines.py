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


def _with_broken_peers(monkeypatch):
    """Two peers that fail as pyppmd does on some executables: one raises while decoding, one
    gives back other bytes."""
    def fail(blob):
        raise ValueError("L1595: Corrupted input data.")
    broken = {"crashes": (lambda d: d[::-1], fail), "lossy": (lambda d: d, lambda b: b[:-1])}
    monkeypatch.setattr(B, "available", lambda: {**BASELINES, **broken})


def test_a_peer_that_fails_on_an_input_is_left_out_with_its_reason(monkeypatch):
    _with_broken_peers(monkeypatch)
    with pytest.raises(B.PeerFailed, match=r"crashes failed on this input \(ValueError: L1595"):
        B.run_baseline("crashes", TEXT)
    with pytest.raises(B.PeerFailed, match="lossy did not give back its input"):
        B.run_primed("lossy", TEXT, TEXT)
    failed = {}
    got = run_baselines(TEXT, ["gzip -9", "crashes", "lossy", "xz -9e"], failed=failed)
    assert [r.name for r in got] == ["gzip -9", "xz -9e"]
    assert set(failed) == {"crashes", "lossy"} and "L1595" in failed["crashes"]


def test_the_compression_worker_reports_a_failed_peer_beside_the_others(monkeypatch, tmp_path):
    from types import SimpleNamespace

    from umoec.compress import worker as W
    _with_broken_peers(monkeypatch)
    monkeypatch.setattr(W, "emit", lambda event: None)
    src = tmp_path / "in.txt"
    src.write_bytes(TEXT)
    out = W.do_compress(SimpleNamespace(input=str(src), output=str(tmp_path / "in.umc"),
                                        profile="cm", baselines="gzip -9,crashes", model=None,
                                        checkpoint=None))
    assert out["baselines"][0]["name"] == "gzip -9" and out["baselines"][0]["packed_bytes"] > 0
    assert out["baselines"][1]["name"] == "crashes" and "L1595" in out["baselines"][1]["error"]
