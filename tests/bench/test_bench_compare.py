"""bench_compare runs end to end on a small run (it names the caches it clears, which it had
outgrown once): every measurement prints."""
import bench.bench_compare as B


def test_the_bench_runs_on_a_small_run(monkeypatch, capsys):
    monkeypatch.setattr(B, "ROWS", 4_000)
    monkeypatch.setattr(B, "SPIKE_AT", 1_234)
    monkeypatch.setattr(B, "median_ms", lambda fn, repeats=1: (1.0, fn()))
    B.main()
    out = capsys.readouterr().out
    assert "ingest 4,000-row metrics.db" in out and "compare figure" in out
