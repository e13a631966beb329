"""The learning-rate schedule the trainer, simulator and cockpit preview share."""
import pytest

from umoec.schedule import MIN_LR_RATIO, lr_curve, lr_multiplier


def test_warmup_is_linear_and_reaches_peak():
    assert lr_multiplier(0, 1000, 100, True) == pytest.approx(0.01)
    assert lr_multiplier(99, 1000, 100, True) == pytest.approx(1.0)


def test_cosine_decays_to_the_floor_and_constant_stays():
    assert lr_multiplier(100, 1000, 100, True) == pytest.approx(1.0)
    assert lr_multiplier(1000, 1000, 100, True) == pytest.approx(MIN_LR_RATIO)
    assert lr_multiplier(550, 1000, 100, True) == pytest.approx((1 + MIN_LR_RATIO) / 2)
    assert lr_multiplier(900, 1000, 100, False) == 1.0
    assert lr_multiplier(0, 10, 0, True) == pytest.approx(1.0)


def test_curve_includes_the_warmup_corner():
    steps, lrs = lr_curve(1000, 100, True, 3e-3, points=20)
    assert 99 in steps and 100 in steps and max(lrs) == pytest.approx(3e-3)
    assert steps == sorted(steps) and steps[0] == 0 and steps[-1] == 999
