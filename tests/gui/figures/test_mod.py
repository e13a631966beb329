"""MoD tab figures and card numbers (gui/figures/mod.py) on small, hand-made DataFrames."""
import pytest

from gui.figures.mod import mod_current_fig, mod_gate_history_fig, mod_summary
from tests.gui.figures.frames import mod


def test_mod_gate_history_has_lines_per_block_inference_and_dashed_capacity():
    fig = mod_gate_history_fig(mod())
    names = [t.name for t in fig.data]
    assert names == ["block 2 training", "block 2 inference", "block 5 training", "block 5 inference",
                     "target capacity"]
    cap = fig.data[-1]
    assert cap.line.dash == "dash" and set(cap.y) == {0.5}
    assert fig.data[1].line.dash == "dot"
    assert fig.layout.yaxis.tickformat == ".0%"


def test_mod_gate_history_without_inference_and_with_changing_capacity():
    df = mod(steps=(10, 20, 30), blocks=(2,), inference=False)
    df.loc[df["step"] == 30, "capacity"] = 0.6
    fig = mod_gate_history_fig(df)
    assert [t.name for t in fig.data] == ["block 2 training", "target capacity"]
    assert list(fig.data[-1].y) == [0.5, 0.5, 0.6]


def test_mod_current_fig_has_training_and_inference_bars_and_capacity_line():
    fig = mod_current_fig(mod(steps=(20,)))
    assert [t.type for t in fig.data] == ["bar", "bar"]
    assert list(fig.data[0].x) == ["block 2", "block 5"]
    (line,) = fig.layout.shapes
    assert line.y0 == line.y1 == 0.5 and line.line.dash == "dash"


def test_mod_summary_numbers():
    at = mod(steps=(20,))
    s = mod_summary(at, mod())
    assert s["average"] == pytest.approx(0.535)  # (0.52 + 0.55) / 2
    assert s["deviation"] == pytest.approx(0.035)
    assert s["worst"] == pytest.approx(0.05)
    assert s["inference"] == pytest.approx(0.6)
    assert s["step"] == 20 and s["blocks"] == 2 and s["run_average"] == pytest.approx(0.535)
    assert mod_summary(mod(inference=False).iloc[:2])["inference"] is None
    assert mod_summary(at.iloc[0:0]) == {}
