"""Charts that stay honest (gui/figures/series.py): downsampling keeps peaks, a zoom re-aggregates
the visible range at full resolution, the EMA is debiased, computed on every row and continued
exactly, relayout events are read correctly; the running mean and outlier clipping give the
numbers their rules say and continue exactly too."""
import re

import numpy as np
import pandas as pd
import pytest

from gui.figures.series import (
    CLIP_K,
    CONTEXT_FRACTION,
    METHODS,
    STEP_MAD_TO_SD,
    X_ZOOM_KEY,
    Smoothing,
    Zoom,
    clip_outliers,
    downsample,
    ema,
    ema_continue,
    ema_state,
    parse_relayout,
    points,
    running_mean,
    running_mean_continue,
    smooth,
    smooth_continue,
    thin,
    view_indices,
    window_of,
)


def spiky(n=200_000, seed=0, spike_at=123_457, dip_at=54_321):
    rng = np.random.default_rng(seed)
    x = np.arange(n, dtype=float)
    y = 1.2 + 6.0 / np.sqrt(x + 1) + rng.normal(0, 0.01, n)
    y[spike_at % n] += 50.0
    y[dip_at % n] -= 30.0
    return x, y


def test_overview_is_small_and_keeps_peaks_and_dips():
    x, y = spiky()
    idx = view_indices(x, y, n_out=1200)
    assert len(idx) <= 1200 + 4
    assert 123_457 in idx and 54_321 in idx          # the extremes survive
    assert idx[0] == 0 and idx[-1] == len(x) - 1     # and the ends
    assert np.all(np.diff(idx) > 0)


def test_zoom_reaggregates_the_visible_range_at_full_resolution():
    x, y = spiky()
    idx = view_indices(x, y, 100_000, 100_400, n_out=1200)
    inside = idx[(x[idx] >= 100_000) & (x[idx] <= 100_400)]
    assert len(inside) == 401                        # every row of a small window
    assert 99_999 in idx and 100_401 in idx          # one beyond each edge: lines reach the frame
    outside = idx[(x[idx] < 99_999) | (x[idx] > 100_401)]
    assert 0 < len(outside) <= 1200 // CONTEXT_FRACTION + 4   # coarse context for panning
    wide = view_indices(x, y, 120_000, 130_000, n_out=1200)   # 10k rows in view
    shown = wide[(x[wide] >= 120_000) & (x[wide] <= 130_000)]
    assert len(shown) <= 1200 + 4 and 123_457 in shown


def test_points_returns_plain_lists_and_handles_empty_and_nan():
    x, y = np.arange(10.0), np.arange(10.0)
    xs, ys = points(x, y)
    assert xs == list(range(10)) and ys == [float(v) for v in range(10)]
    assert points(np.zeros(0), np.zeros(0)) == ([], [])
    x, y = spiky(5000)
    y[100:200] = np.nan
    xs, ys = points(x, y, n_out=500)
    assert len(xs) <= 504


def test_ema_is_debiased_and_the_zoom_never_recomputes_it():
    values = np.array([10.0, 10.0, 10.0, 0.0])
    a = 0.9
    out = ema(values, a)
    assert out[0] == pytest.approx(10.0)             # debiased: no pull toward 0 at the start
    weights = a ** np.arange(3, -1, -1)
    assert out[-1] == pytest.approx((weights * values).sum() / weights.sum())
    assert np.allclose(ema(values, 0.0), values)
    # the smoothed values a zoom shows are those of the full-resolution EMA, not of the window
    x, y = spiky(20_000)
    full = ema(y, 0.95)
    idx = view_indices(x, full, 10_000, 10_300)
    window = idx[(x[idx] >= 10_000) & (x[idx] <= 10_300)]
    assert np.allclose(full[window], ema(y, 0.95)[window])
    assert not np.isclose(full[10_000], ema(y[10_000:], 0.95)[0])


@pytest.mark.parametrize("event, expected", [
    ({"xaxis.range[0]": 10, "xaxis.range[1]": 20}, Zoom(10.0, 20.0)),
    ({"xaxis2.range[0]": 30.5, "xaxis2.range[1]": 7}, Zoom(7.0, 30.5)),   # subplot, reversed
    ({"xaxis.range": [1, 2]}, Zoom(1.0, 2.0)),
    ({"xaxis.autorange": True, "yaxis.autorange": True}, Zoom(reset=True)),
    ({"autosize": True}, None),
    ({"yaxis.range[0]": 1, "yaxis.range[1]": 2}, None),                      # y only
    ({"xaxis.range[0]": "a", "xaxis.range[1]": 2}, None),
    ({"xaxis.range[0]": 5, "xaxis.range[1]": 5}, None),
    (None, None),
])
def test_parse_relayout(event, expected):
    assert parse_relayout(event) == expected
    # the page's filter (X_ZOOM_KEY, in JavaScript) passes every event that can be a zoom on
    # (a malformed one is the server's to refuse) and holds back autosize and y-only ones
    passed = isinstance(event, dict) and any(re.match(X_ZOOM_KEY, k) for k in event)
    assert passed == (event is not None and any(k.startswith("xaxis") for k in event))
    if expected is not None:
        assert passed


def test_thin_keeps_short_series_whole_and_long_ones_bounded_with_peaks():
    x = np.arange(100)
    assert len(thin(x, [x * 1.0])) == 100
    x = np.arange(50_000)
    y = np.sin(x / 500.0)
    y[12_345] = 50.0  # a spike must survive
    idx = thin(x, [y], n_out=1000)
    assert len(idx) <= 1000 and 12_345 in idx
    assert np.all(np.diff(idx) > 0)


def test_ema_is_debiased():
    s = pd.Series([10.0, 10.0, 10.0])
    assert ema(s, 0.9).tolist() == [10.0, 10.0, 10.0]  # no pull toward 0
    assert ema(pd.Series([0.0, 1.0]), 0.0).tolist() == [0.0, 1.0]


def test_ema_continuation_matches_full_ema():
    x = np.random.default_rng(0).normal(5, 1, 500)
    for a in (0.0, 0.6, 0.99):
        num, den = ema_state(x[:300], a)
        tail, _, _ = ema_continue(x[300:], a, num, den)
        assert np.allclose(tail, ema(x, a)[300:])
    idx = downsample(np.arange(10), np.arange(10.0), 100)
    assert list(idx) == list(range(10))


# -- smoothing methods and outlier clipping --------------------------------------------------------
def test_the_slider_maps_to_a_running_mean_window():
    assert [window_of(s) for s in (0.0, 0.5, 0.6, 0.9, 0.95, 0.99)] == [1, 2, 3, 10, 20, 100]
    assert Smoothing.of("mean", 0.95).label() == "mean of 20"
    assert Smoothing.of("ema", 0.6, clip=True).label() == "EMA 0.60, clipped"
    assert Smoothing.of("none", 0.3).label() == "unsmoothed"
    assert Smoothing.of("bogus", None, None) == Smoothing("ema", 0.0, False)
    spec = Smoothing("mean", 0.9, True)
    assert Smoothing.from_state(spec.as_state()) == spec


def test_running_mean_averages_the_trailing_window():
    assert running_mean([1.0, 2.0, 3.0, 4.0, 5.0], 3).tolist() == [1.0, 1.5, 2.0, 3.0, 4.0]
    assert running_mean([4.0, 8.0], 1).tolist() == [4.0, 8.0]
    out, tail = running_mean_continue([4.0, 5.0], 3, [2.0, 3.0])
    assert out.tolist() == [3.0, 4.0] and tail == [4.0, 5.0]


def test_none_returns_the_input_and_the_methods_differ():
    x = np.array([3.0, 1.0, 4.0, 1.0, 5.0])
    assert smooth(x, Smoothing("none", 0.9)).tolist() == x.tolist()
    assert np.allclose(smooth(x, Smoothing("ema", 0.9)), ema(x, 0.9))
    assert smooth(x, Smoothing("mean", 0.5)).tolist() == [3.0, 2.0, 2.5, 2.5, 3.0]


def test_clipping_pulls_a_spike_into_the_band_and_leaves_the_rest():
    x = np.array([1.0, 1.1, 0.9, 1.0, 1.1, 0.9, 1.0, 100.0, 1.0])
    # at the spike: the median of rows 3..7 is 1.0, the steps into rows 1..7 are .1 .2 .1 .1 .2
    # .1 99 (median .1): the band is 1.0 +- 5 * 1.0483 * 0.1
    out = clip_outliers(x)
    assert out[7] == pytest.approx(1.0 + CLIP_K * STEP_MAD_TO_SD * 0.1)
    assert np.array_equal(np.delete(out, 7), np.delete(x, 7))
    assert clip_outliers(np.full(5, 2.0)).tolist() == [2.0] * 5          # flat: nothing to clip
    falling = 8.0 / np.sqrt(np.arange(1.0, 200.0))                     # a steep, clean curve
    assert np.array_equal(clip_outliers(falling), falling)
    jump = np.r_[np.full(20, 3.0), np.full(20, 2.0)] + 0.01 * np.sin(np.arange(40))
    kept = clip_outliers(jump) == jump                                # a real drop at row 20:
    assert not kept[20:22].any() and kept[22:].all() and kept[:20].all()   # kept from its 3rd row


def test_clipping_removes_a_single_spikes_effect_on_the_smoothed_line():
    rng = np.random.default_rng(1)
    x = 2.0 + rng.normal(0, 0.02, 400)
    spiked = x.copy()
    spiked[200] += 40.0
    for method in ("ema", "mean"):
        spec = Smoothing(method, 0.95, clip=True)
        assert np.abs(smooth(spiked, spec) - smooth(x, spec)).max() < 0.02
        unclipped = Smoothing(method, 0.95)
        assert np.abs(smooth(spiked, unclipped) - smooth(x, unclipped)).max() > 1.0


@pytest.mark.parametrize("spec", [Smoothing(m, s, c) for m in METHODS for s in (0.0, 0.9, 0.99)
                                  for c in (False, True)])
def test_every_smoothing_continued_row_by_row_equals_the_full_computation(spec):
    x = 1.5 + np.random.default_rng(2).normal(0, 0.05, 600)
    x[[37, 310, 311]] += 20.0
    first, state = smooth_continue(x[:7], spec)
    parts = [first]
    for lo, hi in ((7, 8), (8, 150), (150, 599), (599, 600)):
        out, state = smooth_continue(x[lo:hi], spec, state)
        parts.append(out)
    assert np.allclose(np.concatenate(parts), smooth(x, spec), rtol=0, atol=1e-12)
