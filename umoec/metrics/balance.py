"""Expert-load balance of a mixture of experts: how evenly a router spreads bytes over experts.

- `gini(load)`: 0 = perfectly balanced, (n-1)/n = one expert takes everything.
- `max_min_ratio(load)`: largest over smallest load, 1 = balanced (the smallest floored).
- `load_balance_table(routing)`: both, for every (step, block) of a routing history.

Statistics only (numpy and pandas; no plotting, no I/O): the cockpit's Routing tab draws them
(gui/figures/routing.py).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

MIN_LOAD_FLOOR = 1e-4        # max/min ratio: an expert with (almost) no load counts as this


def gini(load, axis: int = -1):
    """Gini coefficient of expert loads: 0 = perfectly balanced, (n-1)/n = one expert takes all.

    G = sum_i (2i - n - 1) * c_(i) / (n * sum c), c sorted ascending, i = 1..n (TECHNIQUES.md
    section 2). The GUI spec's `1 - 2*sum(cumsum(sorted c)/sum c)/n` is exactly this minus 1/n
    (it gives -1/n for equal loads); this form is used because "balanced" reads as 0. Works on
    the last axis of any array; all-zero rows give 0.
    """
    c = np.sort(np.asarray(load, dtype=float), axis=axis)
    c = np.moveaxis(c, axis, -1)
    n = c.shape[-1]
    weights = 2.0 * np.arange(1, n + 1) - n - 1
    total = c.sum(axis=-1)
    num = (c * weights).sum(axis=-1)
    out = np.divide(num, n * total, out=np.zeros_like(total), where=total > 0)
    return float(out) if out.ndim == 0 else out


def max_min_ratio(load, axis: int = -1, floor: float = MIN_LOAD_FLOOR):
    """Largest over smallest expert load (1 = balanced); the smallest is floored at `floor`."""
    c = np.asarray(load, dtype=float)
    out = c.max(axis=axis) / np.maximum(c.min(axis=axis), floor)
    return float(out) if np.ndim(out) == 0 else out


def load_balance_table(routing: pd.DataFrame) -> pd.DataFrame:
    """Gini and max/min ratio of every (step, block) in a routing history (long format)."""
    cols = ["step", "block_idx", "gini", "max_min"]
    if routing.empty:
        return pd.DataFrame(columns=cols)
    d = routing.sort_values(["step", "block_idx", "expert_idx"])
    sizes = d.groupby(["step", "block_idx"], sort=True).size()
    out = sizes.index.to_frame(index=False)
    if sizes.nunique() == 1:  # the usual case: every block logs the same experts every step
        loads = d["load"].to_numpy(dtype=float).reshape(-1, int(sizes.iloc[0]))
        out["gini"], out["max_min"] = gini(loads), max_min_ratio(loads)
    else:
        groups = d.groupby(["step", "block_idx"], sort=True)["load"]
        out["gini"] = groups.apply(lambda s: gini(s.to_numpy())).to_numpy()
        out["max_min"] = groups.apply(lambda s: max_min_ratio(s.to_numpy())).to_numpy()
    return out[cols]
