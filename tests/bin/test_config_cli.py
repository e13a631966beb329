"""python -m bin.config: check/show/format/docs, one-line errors, exit codes."""
from tests.conftest import run_module


def test_check_ok_and_warning(root):
    res = run_module("bin.config", "check", "configs/tier1_micro.yaml")
    assert res.returncode == 0 and "ok (tier tier1_micro" in res.stdout
    res = run_module("bin.config", "check", "configs/tier1_micro.yaml", "--set",
                     "training.precision=bf16")
    assert res.returncode == 0 and "warning: training.precision=bf16 on CPU" in res.stdout


def test_check_error_is_one_line_with_exit_2(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("moe:\n  top_k: 9\n")
    res = run_module("bin.config", "check", str(bad))
    assert res.returncode == 2
    assert res.stderr.strip() == f"config: config error in {bad}: moe.top_k=9 must be <= moe.n_routed=8"


def test_debug_shows_the_traceback(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("moe: [")
    res = run_module("bin.config", "check", str(bad), "--debug")
    assert res.returncode == 2 and "Traceback" in res.stderr


def test_show_and_format(tmp_path):
    path = tmp_path / "mine.yaml"
    path.write_text("# my notes\n\nmoe:\n  top_k: 1\n")
    res = run_module("bin.config", "show", str(path), "--set", "moe.n_routed=4")
    assert res.returncode == 0 and "n_routed: 4" in res.stdout and "# my notes" in res.stdout
    assert run_module("bin.config", "format", str(path)).returncode == 0
    text = path.read_text()
    assert text.startswith("# my notes\n\n") and "# Routed experts chosen per byte" in text


def test_docs_writes_the_reference(tmp_path):
    out = tmp_path / "config.md"
    assert run_module("bin.config", "docs", "--out", str(out)).returncode == 0
    assert "`moe.top_k`" in out.read_text()
