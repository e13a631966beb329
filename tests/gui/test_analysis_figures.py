"""Figure builders of the analysis tabs (gui/viz_utils.py) on small, hand-made DataFrames."""
import numpy as np
import pandas as pd
import pytest

from gui import viz_utils as V


# -- small frames shaped like gui/db.py's results -------------------------------------------------
def routing(steps=(10, 20, 30), blocks=(1, 3), n=4, skew=0.0) -> pd.DataFrame:
    rows = []
    for s in steps:
        for b in blocks:
            load = np.full(n, 1.0 / n)
            load[0] += skew
            load /= load.sum()
            rows += [(s, b, e, load[e], 0.01 * e - 0.015) for e in range(n)]
    return pd.DataFrame(rows, columns=["step", "block_idx", "expert_idx", "load", "bias"])


def mod(steps=(10, 20), blocks=(2, 5), capacity=0.5, inference=True) -> pd.DataFrame:
    rows = [(s, b, capacity + 0.01 * b, capacity, (capacity + 0.1) if inference else None)
            for s in steps for b in blocks]
    return pd.DataFrame(rows, columns=["step", "block_idx", "fraction_processed", "capacity",
                                       "fraction_inference"])


def activations(blocks=(0, 1, 2), step=200) -> pd.DataFrame:
    rows = [(step, b, 1.0 + b, 0.3, 0.2 + b, 0.8 + b, 1.0 + b, 1.2 + b, 1.9 + b) for b in blocks]
    return pd.DataFrame(rows, columns=["step", "block_idx", "mean", "std", "p1", "p25", "p50", "p75",
                                       "p99"])


def hidden(blocks=(0, 1, 2), n=20, step=50) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    rows = [(step, b, i, *rng.normal(0, 1 + b, 2)) for b in blocks for i in range(n)]
    return pd.DataFrame(rows, columns=["step", "block_idx", "sample_idx", "pc1", "pc2"])


def is_reference(trace) -> bool:
    return trace.line.dash == "dash"


# -- Gini and max/min ------------------------------------------------------------------------------
@pytest.mark.parametrize("n", [2, 4, 16])
def test_gini_is_zero_for_equal_load_and_n_minus_1_over_n_for_one_hot(n):
    assert V.gini(np.full(n, 1.0 / n)) == pytest.approx(0.0, abs=1e-12)
    one_hot = np.zeros(n)
    one_hot[n // 2] = 1.0
    assert V.gini(one_hot) == pytest.approx((n - 1) / n)


def test_gini_known_vector_and_spec_formula_differs_by_one_over_n():
    c = np.array([0.1, 0.2, 0.3, 0.4])
    # sum_i (2i - n - 1) c_(i) / (n sum c) = (-3*.1 - .2 + .3 + 3*.4) / 4 = 0.25
    assert V.gini(c) == pytest.approx(0.25)
    spec = 1 - 2 * np.sum(np.cumsum(np.sort(c)) / c.sum()) / len(c)
    assert V.gini(c) - spec == pytest.approx(1 / len(c))
    assert V.gini(c[::-1] * 7.0) == pytest.approx(0.25)  # order and scale do not matter


def test_gini_is_vectorised_over_rows_and_safe_on_zero_rows():
    loads = np.array([[0.25, 0.25, 0.25, 0.25], [1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]])
    np.testing.assert_allclose(V.gini(loads), [0.0, 0.75, 0.0])


def test_max_min_ratio_floors_dead_experts():
    assert V.max_min_ratio([0.25, 0.25, 0.25, 0.25]) == pytest.approx(1.0)
    assert V.max_min_ratio([0.5, 0.25, 0.25]) == pytest.approx(2.0)
    assert V.max_min_ratio([1.0, 0.0]) == pytest.approx(1.0 / V.MIN_LOAD_FLOOR)


def test_load_balance_table_has_one_row_per_step_and_block():
    t = V.load_balance_table(routing(skew=0.0))
    assert list(t.columns) == ["step", "block_idx", "gini", "max_min"]
    assert len(t) == 3 * 2
    np.testing.assert_allclose(t["gini"], 0.0, atol=1e-12)
    np.testing.assert_allclose(t["max_min"], 1.0)
    ragged = pd.concat([routing(steps=(10,), blocks=(1,), n=4), routing(steps=(10,), blocks=(2,), n=3)])
    assert len(V.load_balance_table(ragged)) == 2
    assert V.load_balance_table(routing().iloc[0:0]).empty


def test_thin_keeps_short_series_whole_and_long_ones_bounded_with_peaks():
    x = np.arange(100)
    assert len(V.thin(x, [x * 1.0])) == 100
    x = np.arange(50_000)
    y = np.sin(x / 500.0)
    y[12_345] = 50.0  # a spike must survive
    idx = V.thin(x, [y], n_out=1000)
    assert len(idx) <= 1000 and 12_345 in idx
    assert np.all(np.diff(idx) > 0)


# -- routing figures -------------------------------------------------------------------------------
def test_routing_heatmap_is_blocks_by_experts_centred_on_balance():
    at = routing(steps=(30,), blocks=(1, 3), n=4, skew=0.2)
    fig = V.routing_heatmap_fig(at, highlight=(3, 2))
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
    fig = V.moe_routing_history_fig(routing(n=4), block_idx=3)
    lines = [t for t in fig.data if not is_reference(t)]
    (ref,) = [t for t in fig.data if is_reference(t)]
    assert [t.name for t in lines] == [f"expert {e}" for e in range(4)]
    assert list(lines[0].x) == [10, 20, 30]
    assert set(ref.y) == {0.25} and ref.name == "balanced 1/4"
    assert fig.layout.xaxis.title.text == "step" and "block 3" in fig.layout.yaxis.title.text


def test_moe_routing_history_bias_view_and_highlight():
    fig = V.moe_routing_history_fig(routing(n=4), block_idx=1, value="bias", highlight=2)
    (ref,) = [t for t in fig.data if is_reference(t)]
    assert set(ref.y) == {0.0}
    lines = {t.name: t for t in fig.data if not is_reference(t)}
    assert lines["expert 2"].line.width > lines["expert 0"].line.width
    assert lines["expert 0"].opacity < 1.0
    np.testing.assert_allclose(lines["expert 2"].y, [0.005] * 3)


def test_moe_routing_history_defaults_to_lowest_block():
    fig = V.moe_routing_history_fig(routing(), block_idx=None)
    assert "block 1" in fig.layout.yaxis.title.text


def test_load_balance_fig_plots_gini_and_ratio_per_block_with_reference_lines():
    fig = V.load_balance_fig(routing(blocks=(1, 3), skew=0.3))
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
    fig = V.expert_detail_fig(e, 1, 2, n_experts=4)
    names = [t.name for t in fig.data]
    assert names[:2] == ["load", "bias"] and fig.data[1].yaxis == "y2"
    assert fig.layout.yaxis2.overlaying == "y"
    assert "block 1, expert 2" in fig.layout.title.text
    assert is_reference(fig.data[2]) and set(fig.data[2].y) == {0.25}


# -- MoD -------------------------------------------------------------------------------------------
def test_mod_gate_history_has_lines_per_block_inference_and_dashed_capacity():
    fig = V.mod_gate_history_fig(mod())
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
    fig = V.mod_gate_history_fig(df)
    assert [t.name for t in fig.data] == ["block 2 training", "target capacity"]
    assert list(fig.data[-1].y) == [0.5, 0.5, 0.6]


def test_mod_current_fig_has_training_and_inference_bars_and_capacity_line():
    fig = V.mod_current_fig(mod(steps=(20,)))
    assert [t.type for t in fig.data] == ["bar", "bar"]
    assert list(fig.data[0].x) == ["block 2", "block 5"]
    (line,) = fig.layout.shapes
    assert line.y0 == line.y1 == 0.5 and line.line.dash == "dash"


def test_mod_summary_numbers():
    at = mod(steps=(20,))
    s = V.mod_summary(at, mod())
    assert s["average"] == pytest.approx(0.535)  # (0.52 + 0.55) / 2
    assert s["deviation"] == pytest.approx(0.035)
    assert s["worst"] == pytest.approx(0.05)
    assert s["inference"] == pytest.approx(0.6)
    assert s["step"] == 20 and s["blocks"] == 2 and s["run_average"] == pytest.approx(0.535)
    assert V.mod_summary(mod(inference=False).iloc[:2])["inference"] is None
    assert V.mod_summary(at.iloc[0:0]) == {}


# -- activations and brain -------------------------------------------------------------------------
def test_activation_dist_draws_one_box_per_block_from_percentiles():
    fig = V.activation_dist_fig(activations())
    assert [t.type for t in fig.data] == ["box"] * 3
    b1 = fig.data[1]
    assert (b1.lowerfence[0], b1.q1[0], b1.median[0], b1.q3[0], b1.upperfence[0]) == (1.2, 1.8, 2.0,
                                                                                      2.2, 2.9)
    assert b1.mean[0] == 2.0 and b1.sd[0] == 0.3 and b1.boxmean == "sd"
    assert "step 200" in fig.layout.title.text
    assert fig.layout.yaxis.title.text == "per-byte RMS of the block's output"  # what is logged


def test_activation_heatmap_is_blocks_by_stats_with_raw_values_as_text():
    fig = V.activation_heatmap_fig(activations())
    (hm,) = fig.data
    assert list(hm.x) == ["mean", "std", "p1", "p25", "p50", "p75", "p99"]
    assert list(hm.y) == ["block 0", "block 1", "block 2"]
    assert np.shape(hm.z) == (3, 7)
    assert hm.z[0][0] == 0.0 and hm.z[2][0] == 1.0  # scaled within each statistic
    assert hm.z[1][1] == 0.5                        # a constant statistic sits mid-scale
    assert hm.text[2][6] == "3.900"


def test_pca_single_block_and_small_multiples():
    one = V.pca_fig(hidden(), block_idx=1)
    (sc,) = one.data
    assert len(sc.x) == 20 and one.layout.yaxis.scaleanchor == "x"
    assert "block 1 at step 50" in one.layout.title.text
    many = V.pca_fig(hidden(blocks=(0, 1, 2, 3, 4)))
    assert len(many.data) == 5
    assert [a.text for a in many.layout.annotations] == [f"block {b}" for b in range(5)]
    assert V.pca_fig(hidden(), block_idx=9).layout.annotations[0].text.startswith("No hidden states")


@pytest.mark.parametrize("builder", [V.routing_heatmap_fig, V.moe_routing_history_fig, V.load_balance_fig,
                                     V.mod_current_fig, V.mod_gate_history_fig, V.activation_dist_fig,
                                     V.activation_heatmap_fig, V.pca_fig])
def test_empty_frames_give_a_message_not_an_empty_chart(builder):
    fig = builder(pd.DataFrame(columns=["step", "block_idx"]))
    assert fig.data == () and fig.layout.annotations[0].text.startswith("No ")
