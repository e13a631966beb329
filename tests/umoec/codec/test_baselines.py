"""Classical baselines run in-process on the same bytes and report honest sizes."""
import gzip

from tests.umoec.codec.helpers import TEXT, pseudo_random_bytes
from umoec.codec.baselines import BASELINES, run_baselines


def test_every_baseline_roundtrips_and_compresses_text():
    results = run_baselines(TEXT)
    assert [r.name for r in results] == list(BASELINES) == ["gzip -9", "xz -9e", "zstd -19", "zstd -22",
                                                            "brotli -11"]
    for r in results:
        assert r.raw_bytes == len(TEXT) and 0 < r.bpb < 2 and r.compress_s >= 0
    assert results[0].packed_bytes == len(gzip.compress(TEXT, compresslevel=9, mtime=0))


def test_random_bytes_do_not_compress():
    for r in run_baselines(pseudo_random_bytes(5000), names=["gzip -9", "zstd -22"]):
        assert r.bpb > 7.9
