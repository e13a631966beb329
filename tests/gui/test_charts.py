"""Charts that stay honest: downsampling keeps peaks, a zoom re-aggregates the visible range at full
resolution, the EMA is debiased and computed on every row, relayout events are read correctly."""
import numpy as np
import pytest

from gui import charts
from gui.series import ema


def spiky(n=200_000, seed=0, spike_at=123_457, dip_at=54_321):
    rng = np.random.default_rng(seed)
    x = np.arange(n, dtype=float)
    y = 1.2 + 6.0 / np.sqrt(x + 1) + rng.normal(0, 0.01, n)
    y[spike_at % n] += 50.0
    y[dip_at % n] -= 30.0
    return x, y


def test_overview_is_small_and_keeps_peaks_and_dips():
    x, y = spiky()
    idx = charts.view_indices(x, y, n_out=1200)
    assert len(idx) <= 1200 + 4
    assert 123_457 in idx and 54_321 in idx          # the extremes survive
    assert idx[0] == 0 and idx[-1] == len(x) - 1     # and the ends
    assert np.all(np.diff(idx) > 0)


def test_zoom_reaggregates_the_visible_range_at_full_resolution():
    x, y = spiky()
    idx = charts.view_indices(x, y, 100_000, 100_400, n_out=1200)
    inside = idx[(x[idx] >= 100_000) & (x[idx] <= 100_400)]
    assert len(inside) == 401                        # every row of a small window
    assert 99_999 in idx and 100_401 in idx          # one beyond each edge: lines reach the frame
    outside = idx[(x[idx] < 99_999) | (x[idx] > 100_401)]
    assert 0 < len(outside) <= 1200 // charts.CONTEXT_FRACTION + 4   # coarse context for panning
    wide = charts.view_indices(x, y, 120_000, 130_000, n_out=1200)   # 10k rows in view
    shown = wide[(x[wide] >= 120_000) & (x[wide] <= 130_000)]
    assert len(shown) <= 1200 + 4 and 123_457 in shown


def test_points_returns_plain_lists_and_handles_empty_and_nan():
    x, y = np.arange(10.0), np.arange(10.0)
    xs, ys = charts.points(x, y)
    assert xs == list(range(10)) and ys == [float(v) for v in range(10)]
    assert charts.points(np.zeros(0), np.zeros(0)) == ([], [])
    x, y = spiky(5000)
    y[100:200] = np.nan
    xs, ys = charts.points(x, y, n_out=500)
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
    idx = charts.view_indices(x, full, 10_000, 10_300)
    window = idx[(x[idx] >= 10_000) & (x[idx] <= 10_300)]
    assert np.allclose(full[window], ema(y, 0.95)[window])
    assert not np.isclose(full[10_000], ema(y[10_000:], 0.95)[0])


@pytest.mark.parametrize("event, expected", [
    ({"xaxis.range[0]": 10, "xaxis.range[1]": 20}, charts.Zoom(10.0, 20.0)),
    ({"xaxis2.range[0]": 30.5, "xaxis2.range[1]": 7}, charts.Zoom(7.0, 30.5)),   # subplot, reversed
    ({"xaxis.range": [1, 2]}, charts.Zoom(1.0, 2.0)),
    ({"xaxis.autorange": True, "yaxis.autorange": True}, charts.Zoom(reset=True)),
    ({"autosize": True}, None),
    ({"yaxis.range[0]": 1, "yaxis.range[1]": 2}, None),                      # y only
    ({"xaxis.range[0]": "a", "xaxis.range[1]": 2}, None),
    ({"xaxis.range[0]": 5, "xaxis.range[1]": 5}, None),
    (None, None),
])
def test_parse_relayout(event, expected):
    assert charts.parse_relayout(event) == expected


def test_graph_config_exports_png_from_the_toolbar():
    cfg = charts.graph_config("compare")
    assert cfg["toImageButtonOptions"]["format"] == "png"
    assert cfg["toImageButtonOptions"]["filename"] == "umoec-compare"


def test_every_chart_with_a_toolbar_saves_its_png_under_its_own_name(tmp_path):
    """Not plotly's default "newplot.png": each chart's PNG is named after the chart."""
    from dash import dcc

    from gui.app import create_app
    app = create_app(tmp_path / "runs", data_dir=tmp_path / "data")
    layout = app.layout() if callable(app.layout) else app.layout

    def walk(node):
        yield node
        children = getattr(node, "children", None)
        for child in children if isinstance(children, (list, tuple)) else [children]:
            if child is not None and hasattr(child, "to_plotly_json"):
                yield from walk(child)

    graphs = [g for g in walk(layout) if isinstance(g, dcc.Graph)]
    shown = [g for g in graphs if (getattr(g, "config", None) or {}).get("displayModeBar") is not False]
    assert len(shown) >= 8, [g.id for g in graphs]
    names = [g.config["toImageButtonOptions"]["filename"] for g in shown]
    assert all(n.startswith("umoec-") for n in names) and len(set(names)) == len(names), names
