"""Compression and Evaluation tab figures (gui/figures/compression.py)."""
import pandas as pd
import pytest

from gui.figures.compression import OURS_COLOUR, compression_comparison_fig, eval_bpb_history_fig


def test_compression_comparison_fig():
    empty = compression_comparison_fig(pd.DataFrame())
    assert empty.data == () and "No finished compression job" in empty.layout.annotations[0].text
    df = pd.DataFrame([("u-moec-tiny (turbo)", 1000, 500, 0.5), ("gzip -9", 1000, 400, 0.01),
                       ("zstd -22", 1000, 0, 0.0)],
                      columns=["method", "raw_bytes", "packed_bytes", "seconds"])
    fig = compression_comparison_fig(df, "job #1")
    bar = fig.data[0]
    assert list(bar.y) == ["u-moec-tiny (turbo)", "gzip -9", "zstd -22"]
    assert list(bar.x) == pytest.approx([4.0, 3.2, 0.0])
    assert bar.marker.color[0] == OURS_COLOUR and fig.layout.title.text == "job #1"


def test_eval_bpb_history_fig_has_reference_lines_and_failures():
    empty = eval_bpb_history_fig(pd.DataFrame())
    assert empty.data == () and "Run enwik8 Eval" in empty.layout.annotations[0].text
    evals = pd.DataFrame({"step": [10, 20, 20], "ts": [1.0, 2.0, 3.0],
                          "dataset": ["val", "val", "enwik8[:100]"], "bpb": [3.0, 2.5, 2.4],
                          "roundtrip_ok": [1, 0, 1]})
    base = pd.DataFrame({"step": [20, 20, 20], "dataset": ["enwik8[:100]", "enwik8[:100]", "val"],
                         "method": ["gzip -9", "xz -9e", "gzip -9"],
                         "compressed_bytes": [30, 25, 99], "original_bytes": [100, 100, 100],
                         "seconds": [0.1, 0.2, 0.1]})
    fig = eval_bpb_history_fig(evals, base)
    names = [t.name for t in fig.data]
    assert names == ["val", "enwik8[:100]", "roundtrip FAIL", "gzip -9 (measured)",
                     "xz -9e (measured)"]
    assert list(fig.data[2].x) == [20] and list(fig.data[3].y) == pytest.approx([2.4])
    refs = sorted(s.y0 for s in fig.layout.shapes)
    assert refs == [1.23, 1.95, 2.7]
    notes = [a.text for a in fig.layout.annotations]
    assert "CMIX 1.23 (enwik8)" in notes and "gzip 2.7 (enwik8)" in notes
    sim = eval_bpb_history_fig(evals.iloc[:1], None, simulated=True)
    assert sim.data[0].name == "val (simulated)"
