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
