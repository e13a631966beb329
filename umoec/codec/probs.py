"""The one probability path: float logits (B, 256) -> integer frequencies (B, 256).

Encoder and decoder both call `logits_to_freqs` (or its two halves, `logit_distances` then
`distances_to_freqs`) and nothing else, so they cannot disagree. Every step is integer or
exactly-rounded IEEE arithmetic, identical on every platform; no exp/log from libm:

1. d = max(row) - logit, in float32 (exact IEEE subtraction), scaled by 2**DIST_FRAC_BITS
   (exact) and rounded to the nearest integer (ties to even): `dq`, a distance in 1/256 nat.
2. Sharpening q ~ p**alpha is `dq * alpha`: alpha is a fixed-point integer `alpha_q`/16.
3. w = EXP_TABLE[min(dq, DIST_MAX)] ~= 2**30 * exp(-dq/256), from a table built with exact
   integer/Decimal arithmetic at import (the same table everywhere).
4. f = floor(w * (M - 256) / sum(w)) + 1 (exact int64), then the remainder M - sum(f) goes to the
   most probable byte (lowest index on ties): every f >= 1 and sum(f) == M = 2**prob_precision.

Rounding the logits to 1/256 nat costs well under 1e-4 bit per byte (tested).
"""
from __future__ import annotations

import os
from decimal import Decimal, localcontext

import numpy as np

from .errors import ProbabilityError

N_SYMBOLS = 256
DIST_FRAC_BITS = 8                     # distances are kept in units of 1/256 nat
DIST_CAP_NATS = 32                     # exp(-32) * 2**30 < 1: farther symbols get only the floor
DIST_MAX = (DIST_CAP_NATS << DIST_FRAC_BITS) - 1   # last table index (32 nats)
WEIGHT_BITS = 30                       # EXP_TABLE[0] == 2**30; w * 2**32 stays below 2**63
ALPHA_ONE = 16                         # alpha_q / ALPHA_ONE is the sharpening exponent
SHARPEN_GRID = (12, 14, 16, 18, 20, 24)  # alpha in {0.75, 0.875, 1, 1.125, 1.25, 1.5}
MIN_PROB_PRECISION, MAX_PROB_PRECISION = 10, 32


def _build_exp_table() -> np.ndarray:
    """EXP_TABLE[j] = round(2**30 * exp(-j / 256)) for j < 32*256, via exact arithmetic."""
    one = 1 << WEIGHT_BITS
    with localcontext() as ctx:
        ctx.prec = 40
        hi = [int((Decimal(-a).exp() * one).to_integral_value()) for a in range(DIST_CAP_NATS)]
        step = 1 << DIST_FRAC_BITS
        lo = [int(((Decimal(-b) / step).exp() * one).to_integral_value()) for b in range(step)]
    table = [(h * g + (one >> 1)) >> WEIGHT_BITS for h in hi for g in lo]
    return np.array(table, dtype=np.int64)


EXP_TABLE = _build_exp_table()
assert EXP_TABLE.shape == (DIST_MAX + 1,) and EXP_TABLE[0] == 1 << WEIGHT_BITS


def _as_float32_rows(logits) -> np.ndarray:
    if hasattr(logits, "detach"):           # a torch tensor; no torch import needed here
        logits = logits.detach().cpu().numpy()
    arr = np.asarray(logits)
    if arr.ndim != 2 or arr.shape[1] != N_SYMBOLS:
        raise ProbabilityError(f"logits must have shape (B, {N_SYMBOLS}), got {tuple(arr.shape)}")
    if arr.dtype != np.float32:
        if not np.issubdtype(arr.dtype, np.floating):
            raise ProbabilityError(f"logits must be floating point, got dtype {arr.dtype}")
        arr = arr.astype(np.float32)
    return arr


def logit_distances(logits) -> np.ndarray:
    """(B, 256) float logits -> int64 distances below the row maximum, in 1/256 nat.

    -inf means probability ~0 (the byte keeps the minimum frequency). NaN, +inf, or a row with
    no finite logit raise ProbabilityError naming the row.
    """
    x = _as_float32_rows(logits)
    if not np.isfinite(x).all():             # one cheap pass in the common, all-finite case
        bad = np.isnan(x) | np.isposinf(x)
        if bad.any():
            row, col = map(int, np.argwhere(bad)[0])
            raise ProbabilityError(f"predictor produced a non-finite logit ({x[row, col]}) at "
                                   f"stream {row}, byte {col}: NaN and +inf cannot be coded")
    mx = x.max(axis=1)
    if len(mx) and np.isneginf(mx).any():
        row = int(np.argmax(np.isneginf(mx)))
        raise ProbabilityError(f"predictor produced only -inf logits for stream {row}")
    with np.errstate(over="ignore", invalid="ignore"):
        d = (mx[:, None] - x) * np.float32(1 << DIST_FRAC_BITS)   # exact scaling; may be inf
    d = np.rint(np.minimum(d, np.float32(DIST_MAX)))
    return d.astype(np.int64)


def distances_to_freqs(dq: np.ndarray, prob_precision: int, alpha_q: int = ALPHA_ONE) -> np.ndarray:
    """int64 distances (B, 256) -> int64 frequencies (B, 256), each >= 1, rows summing to 2**n."""
    if not MIN_PROB_PRECISION <= prob_precision <= MAX_PROB_PRECISION:
        raise ProbabilityError(f"prob_precision must be in {MIN_PROB_PRECISION}..{MAX_PROB_PRECISION}, "
                               f"got {prob_precision}")
    if not 1 <= alpha_q <= 255:
        raise ProbabilityError(f"sharpening alpha_q must be in 1..255, got {alpha_q}")
    if alpha_q != ALPHA_ONE:
        dq = (dq * alpha_q + ALPHA_ONE // 2) >> 4
        dq = np.minimum(dq, DIST_MAX)
    w = np.take(EXP_TABLE, dq)                               # (B, 256), max entry 2**30
    total = 1 << prob_precision
    spread = total - N_SYMBOLS
    freqs = (w * spread) // w.sum(axis=1, keepdims=True) + 1
    rows = np.arange(len(freqs))
    freqs[rows, np.argmax(w, axis=1)] += total - freqs.sum(axis=1)
    return freqs


def logits_to_freqs(logits, prob_precision: int, alpha_q: int = ALPHA_ONE) -> np.ndarray:
    """THE probability path: (B, 256) float logits (numpy or torch) -> int64 frequencies."""
    return distances_to_freqs(logit_distances(logits), prob_precision, alpha_q)


_c = None
if os.environ.get("UMOEC_CM_KERNELS", "") != "python":
    try:  # the compiled per-step loops (_probs.c), when pip built them: the same integers
        from . import _probs as _c
    except ImportError:
        _c = None


def cum_freqs(logits: np.ndarray, prob_precision: int, out: np.ndarray) -> None:
    """out[:, 1:] = the cumulative frequencies of `logits` (R, 256) (no sharpening): what a
    coder consumes each step; out is (R, 257) int64 and out[:, 0] is left as it is."""
    if _c is not None and logits.dtype == np.float32 and out.dtype == np.int64:
        x = np.ascontiguousarray(logits)
        if x.ndim == 2 and x.shape[1] == N_SYMBOLS and out.flags.c_contiguous and \
                _c.cum_freqs(x, EXP_TABLE, len(x), len(EXP_TABLE), prob_precision, out):
            return
    out[:, 1:] = np.cumsum(logits_to_freqs(logits, prob_precision), axis=1)


def freqs_to_cdf(freqs: np.ndarray) -> np.ndarray:
    """(B, 256) frequencies -> (B, 257) cumulative starts, cdf[:, 0] == 0, cdf[:, 256] == M."""
    cdf = np.zeros((freqs.shape[0], N_SYMBOLS + 1), dtype=np.int64)
    np.cumsum(freqs, axis=1, out=cdf[:, 1:])
    return cdf


def symbol_intervals(freqs: np.ndarray, symbols: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(start, freq) of `symbols[i]` in row i of `freqs`: what the coders consume."""
    rows = np.arange(len(symbols))
    sym = symbols.astype(np.int64)
    cdf = freqs_to_cdf(freqs)
    return cdf[rows, sym], freqs[rows, sym]


def ideal_bits(sym_freqs: np.ndarray, prob_precision: int) -> float:
    """Code length in bits of symbols with these frequencies: sum of -log2(f / 2**n)."""
    f = np.asarray(sym_freqs, dtype=np.float64)
    return float(f.size * prob_precision - np.log2(f).sum())
