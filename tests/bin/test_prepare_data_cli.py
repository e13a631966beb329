"""python -m bin.prepare_data: default corpus, sources, one-line errors."""
from tests.conftest import run_module


def test_default_corpus(tmp_path):
    res = run_module("bin.prepare_data", "--out", str(tmp_path / "d"), "--max-bytes", "200000")
    assert res.returncode == 0, res.stderr
    assert "default (Python standard library" in res.stdout
    assert (tmp_path / "d" / "dataset.json").is_file()


def test_bad_source_is_one_line(tmp_path):
    res = run_module("bin.prepare_data", "--source", str(tmp_path / "nope"), "--out",
                     str(tmp_path / "d"))
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert res.stderr.strip() == f"prepare_data: source {tmp_path / 'nope'} does not exist"


def test_weights_pair_with_sources(tmp_path):
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        for i in range(4):
            (tmp_path / name / f"{i}.txt").write_text(name * (300 + i))
    res = run_module("bin.prepare_data", "--source", str(tmp_path / "a"), "--weight", "2",
                     "--source", str(tmp_path / "b"), "--weight", "1", "--out", str(tmp_path / "d"),
                     "--val-fraction", "0.25")
    assert res.returncode == 0, res.stderr
    assert "weights 2, 1:" in res.stdout
    res = run_module("bin.prepare_data", "--weight", "2", "--out", str(tmp_path / "e"))
    assert res.returncode == 2 and res.stderr.strip() == (
        "prepare_data: --weight weighs the --source given with it; there is no --source")
    res = run_module("bin.prepare_data", "--source", str(tmp_path / "a"), "--source",
                     str(tmp_path / "b"), "--weight", "2", "--out", str(tmp_path / "f"))
    assert res.returncode == 2 and "give one weight per source" in res.stderr
