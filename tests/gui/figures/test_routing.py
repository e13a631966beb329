"""Routing tab figures (gui/figures/routing.py) on small, hand-made DataFrames."""
import numpy as np
import pytest

from gui.figures.routing import (
    expert_detail_fig,
    load_balance_fig,
    moe_routing_history_fig,
    routing_heatmap_fig,
)
from tests.gui.figures.frames import is_reference, routing


def test_routing_heatmap_is_blocks_by_experts_centred_on_balance():
    at = routing(steps=(30,), blocks=(1, 3), n=4, skew=0.2)
    fig = routing_heatmap_fig(at, highlight=(3, 2))
    (hm,) = fig.data
    assert hm.type == "heatmap" and np.shape(hm.z) == (2, 4)
    assert list(hm.x) == [0, 1, 2, 3] and list(hm.y) == [1, 3]
    assert hm.zmid == pytest.approx(0.25)
    assert hm.customdata[1][2] == [3, 2]  # [block, expert] of the cell
    assert list(fig.layout.yaxis.ticktext) == ["block 1", "block 3"]
    assert fig.layout.xaxis.title.text == "expert" and "step 30" in fig.layout.title.text
    (shape,) = fig.layout.shapes  # the highlighted cell
    assert (shape.x0, shape.x1, shape.y0, shape.y1) == (1.5, 2.5, 0.5, 1.5)


def test_moe_routing_history_has_one_line_per_expert_and_a_balance_line():
    fig = moe_routing_history_fig(routing(n=4), block_idx=3)
    lines = [t for t in fig.data if not is_reference(t)]
    (ref,) = [t for t in fig.data if is_reference(t)]
    assert [t.name for t in lines] == [f"expert {e}" for e in range(4)]
    assert list(lines[0].x) == [10, 20, 30]
    assert set(ref.y) == {0.25} and ref.name == "balanced 1/4"
    assert fig.layout.xaxis.title.text == "step" and "block 3" in fig.layout.yaxis.title.text


def test_moe_routing_history_bias_view_and_highlight():
    fig = moe_routing_history_fig(routing(n=4), block_idx=1, value="bias", highlight=2)
    (ref,) = [t for t in fig.data if is_reference(t)]
    assert set(ref.y) == {0.0}
    lines = {t.name: t for t in fig.data if not is_reference(t)}
    assert lines["expert 2"].line.width > lines["expert 0"].line.width
    assert lines["expert 0"].opacity < 1.0
    np.testing.assert_allclose(lines["expert 2"].y, [0.005] * 3)


def test_moe_routing_history_defaults_to_lowest_block():
    fig = moe_routing_history_fig(routing(), block_idx=None)
    assert "block 1" in fig.layout.yaxis.title.text


def test_load_balance_fig_plots_gini_and_ratio_per_block_with_reference_lines():
    fig = load_balance_fig(routing(blocks=(1, 3), skew=0.3))
    refs = [t for t in fig.data if is_reference(t)]
    lines = [t for t in fig.data if not is_reference(t)]
    assert len(lines) == 4  # 2 blocks x (gini, max/min)
    assert sorted(set(r.y[0] for r in refs)) == [0.0, 1.0]
    assert fig.layout.yaxis2.type == "log"
    gini_block1 = next(t for t in lines if t.name == "block 1" and t.xaxis == "x")
    assert all(g > 0 for g in gini_block1.y)


def test_expert_detail_has_load_and_bias_on_two_axes():
    e = routing(blocks=(1,), n=4)
    e = e[e["expert_idx"] == 2]
    fig = expert_detail_fig(e, 1, 2, n_experts=4)
    names = [t.name for t in fig.data]
    assert names[:2] == ["load", "bias"] and fig.data[1].yaxis == "y2"
    assert fig.layout.yaxis2.overlaying == "y"
    assert "block 1, expert 2" in fig.layout.title.text
    assert is_reference(fig.data[2]) and set(fig.data[2].y) == {0.25}
