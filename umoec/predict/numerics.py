"""Deterministic natural log of positive int64 weights (no libm): ln W = e*ln2 + ln(mantissa),
the mantissa's log from a table built with Decimal (the same everywhere). Entropy models turn
integer counts into logits with it (order2.py, match.py; the compiled twin in codec/_probs.c)."""
from __future__ import annotations

from decimal import Decimal, localcontext
from functools import lru_cache

import numpy as np

from ..units import LN2

LN_BITS = 12


@lru_cache(maxsize=1)
def ln_mantissa_table() -> np.ndarray:
    """T[i] = ln((2**11 + i + 0.5) / 2**12), i < 2**11: ln of a mantissa in [0.5, 1), Decimal-exact."""
    half = 1 << (LN_BITS - 1)
    with localcontext() as ctx:
        ctx.prec = 30
        return np.array([float(((Decimal(half + i) + Decimal("0.5")) / (1 << LN_BITS)).ln())
                         for i in range(half)], dtype=np.float64)


def int_log(weights: np.ndarray) -> np.ndarray:
    """ln of positive int64 weights as float32, to within 2**-12 relative, identical everywhere."""
    mant, expo = np.frexp(weights.astype(np.float64))
    idx = (mant * (1 << LN_BITS)).astype(np.int64) - (1 << (LN_BITS - 1))
    return (expo * LN2 + ln_mantissa_table()[idx]).astype(np.float32)
