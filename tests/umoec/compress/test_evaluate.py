"""The evaluation writes eval_results and baseline rows and reports the round trip."""
import pytest

from tests.conftest import run_module
from umoec import config as C
from umoec.codec.baselines import BASELINES, available, skipped_peers
from umoec.codec.errors import CodecError
from umoec.compress.evaluate import ENWIK8_HINT, DataChoice, find_data, locate_data
from umoec.metrics import read as q
from umoec.run import RunDir
from umoec.run.atomic import atomic_write_text


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
        assert all(name in res.stdout for name in skipped)  # "left out: ..."


def test_explicit_data_file(tiny_ckpt, tmp_path):
    f = tmp_path / "sample.txt"
    f.write_bytes(b"hello evaluation " * 50)
    res = run_module("bin.evaluate", "--run", str(tiny_ckpt.parent.parent), "--data", str(f),
                     "--checkpoint", str(tiny_ckpt), "--profile", "balanced", timeout=600)
    assert res.returncode == 0, res.stderr
    assert "on sample.txt (850 bytes" in res.stdout



# -- where the evaluation's bytes come from (locate_data; the Evaluation tab says the same) -------
def data_run(tmp_path) -> RunDir:
    run = RunDir(tmp_path / "runs" / "r")
    run.root.mkdir(parents=True)
    cfg = C.load_preset("tier1_micro", ["data.path=data/small"])
    atomic_write_text(run.config_path, C.dumps(cfg))
    return run


def test_locate_data_order_given_file_then_enwik8_then_the_runs_split(tmp_path, monkeypatch):
    monkeypatch.delenv("ENWIK8", raising=False)
    run, root = data_run(tmp_path), tmp_path
    val = root / "data" / "small" / "val.bin"

    none = locate_data(run, root)                              # nothing to evaluate on
    assert (none.path, none.source, none.val_path) == (None, "none", val)
    assert none.note == (ENWIK8_HINT + f"The run's dataset {val.parent} has no val.bin either; "
                         "build it with python -m bin.prepare_data --out data/small")
    with pytest.raises(CodecError) as exc:
        find_data(None, run, root)
    assert str(exc.value) == none.note

    val.parent.mkdir(parents=True)
    val.write_bytes(b"v" * 100)
    split = locate_data(run, root)
    assert (split.path, split.label, split.source) == (val, "small-val", "val")
    assert split.note == ENWIK8_HINT + "Evaluating the run's validation split."
    assert find_data(None, run, root) == (val, "small-val", split.note)

    (root / "data" / "enwik8").write_bytes(b"e")
    assert locate_data(run, root) == DataChoice(root / "data" / "enwik8", "enwik8", "", "enwik8")
    elsewhere = tmp_path / "my-enwik8"
    elsewhere.write_bytes(b"e")
    monkeypatch.setenv("ENWIK8", str(elsewhere))              # $ENWIK8 before data/enwik8
    assert locate_data(run, root).path == elsewhere

    given = tmp_path / "sample.txt"                            # --data before everything
    given.write_bytes(b"s")
    assert find_data(given, run, root) == (given, "sample.txt", "")
    with pytest.raises(CodecError, match=r"--data .* does not exist"):
        find_data(tmp_path / "missing", run, root)


def test_an_unreadable_config_is_an_error_only_when_it_is_needed(tmp_path, monkeypatch):
    monkeypatch.delenv("ENWIK8", raising=False)
    run = RunDir(tmp_path / "r")                               # no config.yaml
    with pytest.raises(C.ConfigError):
        locate_data(run, tmp_path)
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "enwik8").write_bytes(b"e")
    assert locate_data(run, tmp_path).source == "enwik8"
