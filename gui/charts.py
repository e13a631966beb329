"""Charts that stay fast and honest: the pieces every long-series plot of the cockpit shares.

- `graph_config(name)`: the dcc.Graph config (plotly toolbar with PNG export at 2x, no logo).
- `parse_relayout(relayoutData)`: what a zoom, pan or double-click on a chart asked for.
- `view_indices(x, y, lo, hi)`: which points to draw. Without a zoom, the whole series
  downsampled with MinMaxLTTB to about `n_out` points (peaks kept). With a zoom [lo, hi], the
  visible part re-aggregated *at full resolution* (downsampled only if it still holds more than
  `n_out` points; one point beyond each edge so lines reach the frame), plus a coarse overview of
  what lies outside so a pan shows something before the next re-aggregation arrives.

EMA is never computed here: callers smooth the full-resolution series first (gui/series.ema)
and pick points of the smoothed series, so a zoom never changes the smoothed values.
Pure numpy; no Dash, no I/O.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from .series import downsample

VIEW_POINTS = 1500       # per trace on screen (Forge Studio's snapshot is 1,200)
CONTEXT_FRACTION = 4     # outside a zoom: the overview at VIEW_POINTS / 4 points
_RANGE_KEY = re.compile(r"^xaxis(\d*)\.range\[([01])\]$")
_RANGE_LIST = re.compile(r"^xaxis(\d*)\.range$")
_AUTORANGE = re.compile(r"^xaxis(\d*)\.autorange$")


def graph_config(filename: str) -> dict:
    """dcc.Graph config: toolbar on hover with 'Download plot as a PNG' (2x), no plotly logo."""
    return {"displaylogo": False, "toImageButtonOptions": {
        "format": "png", "filename": f"umoec-{filename}", "scale": 2}}


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
