"""Long series made cheap and honest to draw. Pure numpy; no Dash, no I/O.

Smoothing (`ema`, `running_mean`, `clip_outliers`, under one `Smoothing` spec) is computed on
every row, and carried on row by row for the live charts (`smooth_continue` gives the line and
the state to carry on); the point pickers (`downsample`, `thin`, `view_indices` / `points`: a
zoomed range at full resolution plus a coarse overview around it) only ever pick points of a
smoothed series, so a zoom never changes the smoothed values. `parse_relayout` reads what a zoom asked for.
Point budgets per trace (`n_out`): MAX_POINTS for the live Training/Forge charts, VIEW_POINTS
for a chart's view (Compare) and the analysis tabs.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

MAX_POINTS = 2000        # per trace of the live training charts; longer series are downsampled
VIEW_POINTS = 1500       # per trace on screen (Forge Studio's snapshot is 1,200)
CONTEXT_FRACTION = 4     # outside a zoom: the overview at VIEW_POINTS / 4 points
X_ZOOM_KEY = r"^xaxis\d*\.(range(\[[01]\])?|autorange)$"   # any relayout key parse_relayout reads


# -- EMA -------------------------------------------------------------------------------------------
def ema(values: np.ndarray, smoothing: float) -> np.ndarray:
    """Debiased EMA (TensorBoard's smoothing): y_t = sum_i a^i x_(t-i) / sum_i a^i, a=smoothing
    (pandas' ewm(alpha=1-a, adjust=True)), computed on full-resolution data."""
    x = np.asarray(values, dtype=np.float64)
    if smoothing <= 0 or x.size == 0:
        return x.copy()
    return pd.Series(x).ewm(alpha=1.0 - smoothing, adjust=True).mean().to_numpy()


def ema_state(values: np.ndarray, smoothing: float,
              smoothed: np.ndarray | None = None) -> tuple[float, float]:
    """(numerator, denominator) after `values` (whose `ema` is `smoothed`, when already known), so
    `ema_continue` can carry the EMA on."""
    x = np.asarray(values, dtype=np.float64)
    if x.size == 0:
        return 0.0, 0.0
    if smoothing <= 0:
        return float(x[-1]), 1.0
    den = (1.0 - smoothing ** x.size) / (1.0 - smoothing)
    last = (ema(x, smoothing) if smoothed is None else smoothed)[-1]
    return float(last * den), float(den)


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


# -- smoothing methods and outlier clipping -------------------------------------------------------
METHODS = ("ema", "mean", "none")
CENTER_WINDOW = 5        # raw values whose median is the clipping band's centre
CLIP_WINDOW = 50         # step sizes whose median gives the band's noise scale
CLIP_K = 5.0             # band half-width, in noise standard deviations
STEP_MAD_TO_SD = 1.0483  # 1 / (0.6745 * sqrt(2)): median |step| -> sd, for normal noise


def window_of(strength: float) -> int:
    """The running mean's window for the slider's value s: round(1 / (1 - s)), half up."""
    return max(1, int(np.floor(1.0 / (1.0 - min(0.999, max(0.0, strength))) + 0.5)))


@dataclass(frozen=True)
class Smoothing:
    """The loss chart's smoothed line: `method` in METHODS, `strength` the slider (the EMA's
    factor, or the running mean's window through `window_of`; "none" disables the slider),
    `clip` outlier clipping (`clip_outliers`) before smoothing."""

    method: str = "ema"
    strength: float = 0.6
    clip: bool = False

    @classmethod
    def of(cls, method: Any = "ema", strength: Any = 0.6, clip: Any = False) -> Smoothing:
        """From the controls' values or a chart state's: an unknown method reads as EMA, a
        missing strength as 0, a missing clip as off."""
        return cls(method if method in METHODS else "ema",
                   min(0.999, max(0.0, float(strength or 0.0))), bool(clip))

    @classmethod
    def from_state(cls, state: dict | None) -> Smoothing:
        state = state or {}
        return cls.of(state.get("method", "ema"), state.get("smoothing", 0.6), state.get("clip"))

    def as_state(self) -> dict:
        """The keys a chart state keeps (`from_state` reads them back)."""
        return {"smoothing": self.strength, "method": self.method, "clip": self.clip}

    @property
    def window(self) -> int:
        return window_of(self.strength)

    def label(self) -> str:
        """What the legend calls the line: "EMA 0.60", "mean of 20", "unsmoothed", + ", clipped"."""
        text = {"ema": f"EMA {self.strength:.2f}", "mean": f"mean of {self.window}",
                "none": "unsmoothed"}[self.method]
        return f"{text}, clipped" if self.clip else text


def _rolling_median(x: np.ndarray, window: int) -> np.ndarray:
    return pd.Series(x).rolling(window, min_periods=1).median().to_numpy()


def _clip(x: np.ndarray, prev_x: np.ndarray, prev_d: np.ndarray) -> tuple[np.ndarray, dict]:
    """`x` clipped (`clip_outliers`), after raw rows `prev_x` (the last CENTER_WINDOW - 1, or
    none at the start) whose step sizes end with `prev_d`; returns (clipped, state to go on)."""
    if x.size == 0:
        return x.copy(), {"clip_x": prev_x.tolist(), "clip_d": prev_d.tolist()}
    both = np.concatenate([prev_x, x])
    k = len(prev_x)
    centre = _rolling_median(both, CENTER_WINDOW)[k:]
    steps = np.concatenate([prev_d, np.abs(np.diff(both))[max(0, k - 1):]])
    scale = _rolling_median(steps, CLIP_WINDOW)[len(prev_d):]
    if k == 0:  # the very first row has no step into it
        scale = np.concatenate([[np.nan], scale])
    half = CLIP_K * STEP_MAD_TO_SD * scale
    with np.errstate(invalid="ignore"):
        out = np.where(scale > 0, np.clip(x, centre - half, centre + half), x)
    return out, {"clip_x": _tail(both, CENTER_WINDOW - 1), "clip_d": _tail(steps, CLIP_WINDOW - 1)}


def clip_outliers(values: np.ndarray) -> np.ndarray:
    """The "clip outliers" rule, applied before smoothing (the raw trace stays unclipped).

    x_t is clipped to c_t +- CLIP_K * sigma_t: c_t the median of the last CENTER_WINDOW raw values
    (x_t included), sigma_t = STEP_MAD_TO_SD * the median of the last CLIP_WINDOW step sizes
    |x_i - x_(i-1)| (steps, so a falling curve does not widen the band). A spike of one or two
    rows is clipped; a jump lasting CENTER_WINDOW // 2 + 1 rows moves the median and is kept.
    Trailing windows only, so a clipped value never changes as rows arrive; the first row and
    flat stretches (sigma_t 0) are left as they are."""
    x = np.asarray(values, dtype=np.float64)
    return _clip(x, np.zeros(0), np.zeros(0))[0]


def running_mean(values: np.ndarray, window: int) -> np.ndarray:
    """Mean of the last `window` values at each row (of the rows there are, at the start)."""
    x = np.asarray(values, dtype=np.float64)
    if window <= 1 or x.size == 0:
        return x.copy()
    return pd.Series(x).rolling(window, min_periods=1).mean().to_numpy()


def running_mean_continue(values: np.ndarray, window: int,
                          tail: list) -> tuple[np.ndarray, list]:
    """Running mean of the next `values` after the rows `tail` (the last window - 1 of them);
    returns (means, new tail)."""
    prev = np.asarray(tail, dtype=np.float64)
    both = np.concatenate([prev, np.asarray(values, dtype=np.float64)])
    return running_mean(both, window)[len(prev):], _tail(both, window - 1)


def _tail(x: np.ndarray, n: int) -> list:
    return x[max(0, len(x) - n):].tolist() if n > 0 else []


def smooth(values: np.ndarray, spec: Smoothing) -> np.ndarray:
    """The smoothed line of `values` (full resolution): clipped first when `spec.clip`."""
    return smooth_continue(values, spec)[0]


def smooth_continue(values: np.ndarray, spec: Smoothing,
                    state: dict | None = None) -> tuple[np.ndarray, dict]:
    """The smoothed line of the rows `values` that follow those `state` came from (None: the
    first rows), the same numbers `smooth` gives on all rows; returns (smoothed, new state)."""
    x, state = np.asarray(values, dtype=np.float64), dict(state or {})
    if spec.clip:
        x, clip_state = _clip(x, np.asarray(state.get("clip_x", []), dtype=np.float64),
                              np.asarray(state.get("clip_d", []), dtype=np.float64))
        state.update(clip_state)
    if spec.method == "ema" and "ema" not in state:  # the first rows: pandas' vectorised EMA
        smoothed = ema(x, spec.strength)
        x, state["ema"] = smoothed, list(ema_state(x, spec.strength, smoothed))
    elif spec.method == "ema":
        x, num, den = ema_continue(x, spec.strength, *state["ema"])
        state["ema"] = [num, den]
    elif spec.method == "mean":
        x, state["mean"] = running_mean_continue(x, spec.window, state.get("mean", []))
    return x.copy(), state


# -- downsampling ----------------------------------------------------------------------------------
def downsample(x: np.ndarray, y: np.ndarray, n_out: int | None = MAX_POINTS) -> np.ndarray:
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
def view_indices(x: np.ndarray, y: np.ndarray, lo: float | None = None,
                 hi: float | None = None, n_out: int = VIEW_POINTS) -> np.ndarray:
    """Sorted indices of the points of (x, y), x ascending, to draw for the view [lo, hi] (None:
    everything): the visible part whole up to `n_out` points, else downsampled (peaks kept), one
    point beyond each edge, and outside it a coarse overview (n_out / CONTEXT_FRACTION points)."""
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


def points(x: np.ndarray, y: np.ndarray, window: tuple[float, float] | None = None,
           n_out: int = VIEW_POINTS) -> tuple[list, list]:
    """(x list, y list) of the points `view_indices` picks, ready for a plotly trace."""
    lo, hi = window if window else (None, None)
    idx = view_indices(x, y, lo, hi, n_out)
    return np.asarray(x)[idx].tolist(), np.asarray(y, dtype=np.float64)[idx].tolist()


# -- relayout events -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Zoom:
    """What a relayout event asked for: a visible x range, or `reset` (double-click/autoscale)."""

    lo: float | None = None
    hi: float | None = None
    reset: bool = False


def _number(value: Any) -> float | None:
    try:
        out = float(value)
    except (TypeError, ValueError):
        return None
    return out if np.isfinite(out) else None


def parse_relayout(data: Any) -> Zoom | None:
    """The x-axis part of a plotly relayoutData dict; None when it does not touch the x axis
    (autosize, y-only zoom, legend clicks...). Any x axis of a subplot grid counts (xaxis2...)."""
    if not isinstance(data, dict):
        return None
    ends: dict[str, float] = {}
    for key, value in data.items():
        m = re.match(X_ZOOM_KEY, str(key))
        if m is None:
            continue
        if m.group(1) == "autorange":
            if value:
                return Zoom(reset=True)
        elif m.group(2):  # xaxis.range[0] or [1]
            if _number(value) is not None:
                ends[m.group(2)[1]] = _number(value)
        elif isinstance(value, (list, tuple)) and len(value) == 2 and None not in map(_number, value):
            ends = {"0": _number(value[0]), "1": _number(value[1])}
    if "0" in ends and "1" in ends:
        lo, hi = sorted((ends["0"], ends["1"]))
        return Zoom(lo, hi) if hi > lo else None
    return None
