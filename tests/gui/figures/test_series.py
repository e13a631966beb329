"""Charts that stay honest (gui/figures/series.py): downsampling keeps peaks, a zoom re-aggregates
the visible range at full resolution, the EMA is debiased, computed on every row and continued
exactly, relayout events are read correctly."""
import numpy as np
import pandas as pd
import pytest

from gui.figures.series import (CONTEXT_FRACTION, Zoom, downsample, ema, ema_continue, ema_state,
                                parse_relayout, points, thin, view_indices)


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
