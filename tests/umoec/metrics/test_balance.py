"""Expert-load balance statistics (umoec/metrics/balance.py) on known vectors: Gini 0 for
equal loads and (n-1)/n for one expert taking all, max/min 1 for balance and floored for dead
experts, one table row per (step, block)."""
import numpy as np
import pandas as pd
import pytest

from tests.gui.figures.frames import routing  # routing rows shaped as umoec/metrics/read.py returns them
from umoec.metrics.balance import MIN_LOAD_FLOOR, gini, load_balance_table, max_min_ratio


@pytest.mark.parametrize("n", [2, 4, 16])
def test_gini_is_zero_for_equal_load_and_n_minus_1_over_n_for_one_hot(n):
    assert gini(np.full(n, 1.0 / n)) == pytest.approx(0.0, abs=1e-12)
    one_hot = np.zeros(n)
    one_hot[n // 2] = 1.0
    assert gini(one_hot) == pytest.approx((n - 1) / n)


def test_gini_known_vector_and_spec_formula_differs_by_one_over_n():
    c = np.array([0.1, 0.2, 0.3, 0.4])
    # sum_i (2i - n - 1) c_(i) / (n sum c) = (-3*.1 - .2 + .3 + 3*.4) / 4 = 0.25
    assert gini(c) == pytest.approx(0.25)
    spec = 1 - 2 * np.sum(np.cumsum(np.sort(c)) / c.sum()) / len(c)
    assert gini(c) - spec == pytest.approx(1 / len(c))
    assert gini(c[::-1] * 7.0) == pytest.approx(0.25)  # order and scale do not matter


def test_gini_is_vectorised_over_rows_and_safe_on_zero_rows():
    loads = np.array([[0.25, 0.25, 0.25, 0.25], [1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]])
    np.testing.assert_allclose(gini(loads), [0.0, 0.75, 0.0])


def test_max_min_ratio_floors_dead_experts():
    assert max_min_ratio([0.25, 0.25, 0.25, 0.25]) == pytest.approx(1.0)
    assert max_min_ratio([0.5, 0.25, 0.25]) == pytest.approx(2.0)
    assert max_min_ratio([1.0, 0.0]) == pytest.approx(1.0 / MIN_LOAD_FLOOR)


def test_load_balance_table_has_one_row_per_step_and_block():
    t = load_balance_table(routing(skew=0.0))
    assert list(t.columns) == ["step", "block_idx", "gini", "max_min"]
    assert len(t) == 3 * 2
    np.testing.assert_allclose(t["gini"], 0.0, atol=1e-12)
    np.testing.assert_allclose(t["max_min"], 1.0)
    ragged = pd.concat([routing(steps=(10,), blocks=(1,), n=4), routing(steps=(10,), blocks=(2,), n=3)])
    assert len(load_balance_table(ragged)) == 2
    assert load_balance_table(routing().iloc[0:0]).empty


def test_gini_and_max_min_of_small_known_vectors():
    # sorted c = (1, 1, 2), n = 3: sum_i (2i - n - 1) c_(i) = -2*1 + 0*1 + 2*2 = 2; n * sum c = 12
    assert gini([2.0, 1.0, 1.0]) == pytest.approx(1 / 6)
    # c = (0, 0, 1, 3), n = 4: (-3*0 - 0 + 1*1 + 3*3) / (4 * 4) = 10 / 16
    assert gini([3.0, 0.0, 1.0, 0.0]) == pytest.approx(0.625)
    assert max_min_ratio([1.0, 2.0, 4.0]) == pytest.approx(4.0)
    assert max_min_ratio([0.9, 0.1, 0.0], floor=0.05) == pytest.approx(18.0)
    assert isinstance(gini([1.0, 2.0]), float) and isinstance(max_min_ratio([1.0, 2.0]), float)


def test_gini_and_max_min_along_another_axis():
    loads = np.array([[0.25, 1.0], [0.25, 0.0], [0.25, 0.0], [0.25, 0.0]])   # experts down the rows
    np.testing.assert_allclose(gini(loads, axis=0), [0.0, 0.75])
    np.testing.assert_allclose(max_min_ratio(loads, axis=0), [1.0, 1.0 / MIN_LOAD_FLOOR])


def test_load_balance_table_values_of_a_skewed_block():
    # one step, one block, loads (0.5, 0.25, 0.125, 0.125): Gini (-3*.125 - .125 + .25 + 3*.5) / 4
    d = pd.DataFrame({"step": 10, "block_idx": 1, "expert_idx": [2, 0, 3, 1],
                      "load": [0.125, 0.5, 0.125, 0.25]})
    t = load_balance_table(d)
    assert t.to_dict("records") == [{"step": 10, "block_idx": 1, "gini": pytest.approx(0.3125),
                                     "max_min": pytest.approx(4.0)}]
