"""The codec benchmark runs end to end on a tiny workload (numbers are not checked: CPUs are shared)."""
from bench import bench_codec


def test_bench_tables_run_small():
    rows = bench_codec.coder_table(symbols=512)
    assert {r[0] for r in rows} >= {"rANS 32-bit, n=16", "tANS n=12", "constriction AnsCoder, batch"}
    assert all(r[2] > 0 and r[3] > 0 and r[4] > 0 for r in rows)
    data = bench_codec.text_sample(4000)
    assert len(data) == 4000
    names = [r[0] for r in bench_codec.codec_table(data, streams=4)]
    assert "brotli -11" in names and names[0].startswith("order-2")
