"""Long training series made cheap to draw: debiased EMA that can be continued row by row, and
MinMaxLTTB downsampling (tsdownsample) that keeps peaks. Pure numpy, no I/O, no Dash.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

MAX_POINTS = 2000  # per trace; longer series are downsampled for the browser


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


def downsample(x: np.ndarray, y: np.ndarray, n_out: Optional[int] = MAX_POINTS) -> np.ndarray:
    """Indices of at most ~n_out points of (x, y) that keep its shape (MinMaxLTTB); all indices
    when the series is short. x ascending; NaNs in y are tolerated."""
    n = len(x)
    if n_out is None or n <= n_out:
        return np.arange(n)
    from tsdownsample import MinMaxLTTBDownsampler, NaNMinMaxLTTBDownsampler
    yy = np.ascontiguousarray(y, dtype=np.float64)
    ds = NaNMinMaxLTTBDownsampler() if np.isnan(yy).any() else MinMaxLTTBDownsampler()
    idx = ds.downsample(np.ascontiguousarray(x, dtype=np.float64), yy, n_out=n_out)
    return np.asarray(idx, dtype=np.int64)
