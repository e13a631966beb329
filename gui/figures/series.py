"""Long series made cheap and honest to draw. Pure numpy; no Dash, no I/O.

- `ema(values, smoothing)`: debiased EMA (TensorBoard's smoothing), on full-resolution data;
  `ema_state` / `ema_continue` carry it on row by row for the live training charts.
- `downsample(x, y, n_out)`: indices of ~n_out points keeping the shape (MinMaxLTTB via
  tsdownsample, peaks kept); `thin(x, ys, n_out)`: the same for several series sharing x.
- `view_indices(x, y, lo, hi)` / `points(...)`: which points to draw. Without a zoom, the whole
  series downsampled. With a zoom [lo, hi], the visible part re-aggregated *at full resolution*
  (downsampled only if it still holds more than `n_out` points; one point beyond each edge so
  lines reach the frame), plus a coarse overview of what lies outside so a pan shows something
  before the next re-aggregation arrives.
- `parse_relayout(relayoutData)`: what a zoom, pan or double-click on a chart asked for.

EMA is never computed by the point pickers: callers smooth the full-resolution series first and
pick points of the smoothed series, so a zoom never changes the smoothed values.

Point budgets (per trace), all passed as `n_out`: MAX_POINTS for the live Training/Forge charts,
VIEW_POINTS for a chart's view (Compare) and every line of the analysis tabs.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

MAX_POINTS = 2000        # per trace of the live training charts; longer series are downsampled
VIEW_POINTS = 1500       # per trace on screen (Forge Studio's snapshot is 1,200)
CONTEXT_FRACTION = 4     # outside a zoom: the overview at VIEW_POINTS / 4 points
_RANGE_KEY = re.compile(r"^xaxis(\d*)\.range\[([01])\]$")
_RANGE_LIST = re.compile(r"^xaxis(\d*)\.range$")
_AUTORANGE = re.compile(r"^xaxis(\d*)\.autorange$")


# -- EMA -------------------------------------------------------------------------------------------
def ema(values: np.ndarray, smoothing: float) -> np.ndarray:
    """Debiased EMA (TensorBoard's smoothing): y_t = sum_i a^i x_(t-i) / sum_i a^i, a=smoothing.

    Same numbers as pandas' ewm(alpha=1-a, adjust=True), computed on full-resolution data.
    """
    x = np.asarray(values, dtype=np.float64)
    if smoothing <= 0 or x.size == 0:
        return x.copy()
    import pandas as pd
    return pd.Series(x).ewm(alpha=1.0 - smoothing, adjust=True).mean().to_numpy()


def ema_state(values: np.ndarray, smoothing: float) -> tuple[float, float]:
    """(numerator, denominator) after `values`, so `ema_continue` can carry the EMA on."""
    x = np.asarray(values, dtype=np.float64)
    if x.size == 0:
        return 0.0, 0.0
    if smoothing <= 0:
        return float(x[-1]), 1.0
    den = (1.0 - smoothing ** x.size) / (1.0 - smoothing)
    return float(ema(x, smoothing)[-1] * den), float(den)


def ema_continue(values: np.ndarray, smoothing: float, num: float,
                 den: float) -> tuple[np.ndarray, float, float]:
    """EMA of the next `values`, continuing from (num, den); returns (ema, num, den)."""
    out = np.empty(len(values), dtype=np.float64)
    a = max(0.0, smoothing)
    for i, v in enumerate(np.asarray(values, dtype=np.float64)):
        num = a * num + v
        den = a * den + 1.0
        out[i] = num / den
    return out, num, den


# -- downsampling ----------------------------------------------------------------------------------
def downsample(x: np.ndarray, y: np.ndarray, n_out: Optional[int] = MAX_POINTS) -> np.ndarray:
    """Indices of at most ~n_out points of (x, y) that keep its shape (MinMaxLTTB); all indices
    when the series is short (or n_out is None). x ascending; NaNs in y are tolerated."""
    n = len(x)
    if n_out is None or n <= n_out:
        return np.arange(n)
    from tsdownsample import MinMaxLTTBDownsampler, NaNMinMaxLTTBDownsampler
    yy = np.ascontiguousarray(y, dtype=np.float64)
    ds = NaNMinMaxLTTBDownsampler() if np.isnan(yy).any() else MinMaxLTTBDownsampler()
    idx = ds.downsample(np.ascontiguousarray(x, dtype=np.float64), yy, n_out=n_out)
    return np.asarray(idx, dtype=np.int64)


def thin(x, ys, n_out: int = VIEW_POINTS) -> np.ndarray:
    """Indices that keep the shape (peaks included) of every series in `ys` in ~n_out points:
    `downsample` per series, indices unioned (so the series stay aligned on one x); short series
    are returned whole. `x` must be ascending."""
    n = len(x)
    if n <= n_out:
        return np.arange(n)
    return np.unique(np.concatenate([downsample(x, y, n_out) for y in ys])).astype(np.int64)


# -- zoom-aware point picking ----------------------------------------------------------------------
def view_indices(x: np.ndarray, y: np.ndarray, lo: Optional[float] = None,
                 hi: Optional[float] = None, n_out: int = VIEW_POINTS) -> np.ndarray:
    """Sorted indices of the points of (x, y) to draw for the view [lo, hi] (None: everything).

    x ascending. The visible part keeps every point when it holds at most `n_out`, else its
    MinMaxLTTB downsample (peaks kept); outside it, a coarse overview (n_out / 4 points).
    """
    x = np.asarray(x, dtype=np.float64)
    n = len(x)
    if n == 0:
        return np.arange(0)
    y = np.asarray(y, dtype=np.float64)
    if lo is None or hi is None:
        return downsample(x, y, n_out)
    i0 = max(0, int(np.searchsorted(x, lo, side="left")) - 1)
    i1 = min(n, int(np.searchsorted(x, hi, side="right")) + 1)
    inside = i0 + downsample(x[i0:i1], y[i0:i1], n_out) if i1 > i0 else np.arange(0)
    if i0 == 0 and i1 == n:
        return inside
    coarse = downsample(x, y, max(8, n_out // CONTEXT_FRACTION))
    outside = coarse[(coarse < i0) | (coarse >= i1)]
    return np.union1d(inside, outside).astype(np.int64)


def points(x: np.ndarray, y: np.ndarray, window: Optional[tuple[float, float]] = None,
           n_out: int = VIEW_POINTS) -> tuple[list, list]:
    """(x list, y list) of the points `view_indices` picks, ready for a plotly trace."""
    lo, hi = window if window else (None, None)
    idx = view_indices(x, y, lo, hi, n_out)
    return np.asarray(x)[idx].tolist(), np.asarray(y, dtype=np.float64)[idx].tolist()


# -- relayout events -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Zoom:
    """What a relayout event asked for: a visible x range, or `reset` (double-click/autoscale)."""

    lo: Optional[float] = None
    hi: Optional[float] = None
    reset: bool = False

    @property
    def window(self) -> Optional[tuple[float, float]]:
        return None if self.reset or self.lo is None else (self.lo, self.hi)


def _number(value: Any) -> Optional[float]:
    try:
        out = float(value)
    except (TypeError, ValueError):
        return None
    return out if np.isfinite(out) else None


def parse_relayout(data: Any) -> Optional[Zoom]:
    """The x-axis part of a plotly relayoutData dict; None when it does not touch the x axis
    (autosize, y-only zoom, legend clicks...). Any x axis of a subplot grid counts (xaxis2...)."""
    if not isinstance(data, dict):
        return None
    ends: dict[str, float] = {}
    for key, value in data.items():
        m = _RANGE_KEY.match(str(key))
        if m and _number(value) is not None:
            ends[m.group(2)] = _number(value)
            continue
        m = _RANGE_LIST.match(str(key))
        if m and isinstance(value, (list, tuple)) and len(value) == 2:
            lo, hi = _number(value[0]), _number(value[1])
            if lo is not None and hi is not None:
                ends = {"0": lo, "1": hi}
            continue
        if _AUTORANGE.match(str(key)) and value:
            return Zoom(reset=True)
    if "0" in ends and "1" in ends:
        lo, hi = sorted((ends["0"], ends["1"]))
        return Zoom(lo, hi) if hi > lo else None
    return None
