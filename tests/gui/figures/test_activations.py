"""Activations and Brain tab figures (gui/figures/activations.py) on small, hand-made DataFrames."""
import numpy as np

from gui.figures.activations import activation_dist_fig, activation_heatmap_fig, pca_fig
from tests.gui.figures.frames import activations, hidden


def test_activation_dist_draws_one_box_per_block_from_percentiles():
    fig = activation_dist_fig(activations())
    assert [t.type for t in fig.data] == ["box"] * 3
    b1 = fig.data[1]
    assert (b1.lowerfence[0], b1.q1[0], b1.median[0], b1.q3[0], b1.upperfence[0]) == (1.2, 1.8, 2.0,
                                                                                      2.2, 2.9)
    assert b1.mean[0] == 2.0 and b1.sd[0] == 0.3 and b1.boxmean == "sd"
    assert "step 200" in fig.layout.title.text
    assert fig.layout.yaxis.title.text == "per-byte RMS of the block's output"  # what is logged


def test_activation_heatmap_is_blocks_by_stats_with_raw_values_as_text():
    fig = activation_heatmap_fig(activations())
    (hm,) = fig.data
    assert list(hm.x) == ["mean", "std", "p1", "p25", "p50", "p75", "p99"]
    assert list(hm.y) == ["block 0", "block 1", "block 2"]
    assert np.shape(hm.z) == (3, 7)
    assert hm.z[0][0] == 0.0 and hm.z[2][0] == 1.0  # scaled within each statistic
    assert hm.z[1][1] == 0.5                        # a constant statistic sits mid-scale
    assert hm.text[2][6] == "3.900"


def test_pca_single_block_and_small_multiples():
    one = pca_fig(hidden(), block_idx=1)
    (sc,) = one.data
    assert len(sc.x) == 20 and one.layout.yaxis.scaleanchor == "x"
    assert "block 1 at step 50" in one.layout.title.text
    many = pca_fig(hidden(blocks=(0, 1, 2, 3, 4)))
    assert len(many.data) == 5
    assert [a.text for a in many.layout.annotations] == [f"block {b}" for b in range(5)]
    assert pca_fig(hidden(), block_idx=9).layout.annotations[0].text.startswith("No hidden states")
