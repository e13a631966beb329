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
