"""The split benchmark runs end to end on a small input: both process counts code the file, the
files are byte-identical and decode back (bench_split checks it), and it prints the ratio
(numbers are not checked: CPUs are shared)."""
from bench import bench_split


def test_bench_split_runs_small(monkeypatch, capsys):
    monkeypatch.setenv("BENCH_SPLIT_BYTES", "20000")
    monkeypatch.setenv("BENCH_SPLIT_ROUNDS", "1")
    monkeypatch.setenv("BENCH_SPLIT_PROFILES", "turbo")
    bench_split.main()
    out = capsys.readouterr().out
    assert "turbo compress: two processes / one = " in out
    assert "turbo decompress: two processes / one = " in out


def test_sample_has_the_size_asked():
    assert len(bench_split.sample(12345)) == 12345


def test_bench_split_compares_another_checkout(monkeypatch, capsys, tmp_path):
    """BENCH_SPLIT_BASE: another checkout's umc (here this one again, through its path) against
    this one's, both with two processes."""
    monkeypatch.setenv("BENCH_SPLIT_BYTES", "20000")
    monkeypatch.setenv("BENCH_SPLIT_ROUNDS", "1")
    monkeypatch.setenv("BENCH_SPLIT_PROFILES", "turbo")
    monkeypatch.setenv("BENCH_SPLIT_BASE", str(bench_split.ROOT))
    assert [s[0] for s in bench_split.sides()] == ["base", "this"]
    bench_split.main()
    out = capsys.readouterr().out
    assert "turbo compress: this / base = " in out and "      base " in out
