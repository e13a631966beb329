"""The evaluation writes eval_results and baseline rows and reports the round trip."""
from gui import db as q
from tests.conftest import run_module
from umoec.codec.baselines import BASELINES, available, skipped_peers


def test_evaluate_on_the_validation_split(tiny_ckpt):
    run = tiny_ckpt.parent.parent
    res = run_module("bin.evaluate", "--run", str(run), "--max-bytes", "2000", "--profile",
                     "fast", timeout=600)
    assert res.returncode == 0, res.stderr
    assert "enwik8 not found" in res.stdout and "roundtrip: PASS" in res.stdout
    with q.open_db(run / "metrics.db") as conn:
        ev = q.eval_results(conn)
        rows = ev[ev["dataset"].str.endswith("-val[:2000]")]
        assert len(rows) == 1 and rows["roundtrip_ok"].tolist() == [1]
        base = q.eval_baselines(conn)
        assert {"gzip -9", "xz -9e", "zstd -19", "zstd -22", "brotli -11"} <= set(base["method"])
        # primed with the run's own training data (its tail), every installed peer beside
        assert "xz -9e primed" in set(base["method"])
        assert "primed = size(prime + data) - size(prime), prime: the last" in res.stdout
        peers = set(available()) - set(BASELINES)
        assert peers <= set(base["method"])
        assert {f"{p} primed" for p in ("PPMd -o16", "zpaq -m5") if p in peers} <= \
            set(base["method"])
        skipped = skipped_peers()
        assert all(name in res.stdout for name in skipped)  # "not installed here: ..."


def test_explicit_data_file(tiny_ckpt, tmp_path):
    f = tmp_path / "sample.txt"
    f.write_bytes(b"hello evaluation " * 50)
    res = run_module("bin.evaluate", "--run", str(tiny_ckpt.parent.parent), "--data", str(f),
                     "--checkpoint", str(tiny_ckpt), "--profile", "balanced", timeout=600)
    assert res.returncode == 0, res.stderr
    assert "on sample.txt (850 bytes" in res.stdout
