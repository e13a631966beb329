"""Fixed-point arithmetic of the exact coding engine: formats, rounding, tables, exact matmul.

Every value the engine computes is an integer (int64 numpy arrays); a real number x is held as
round(x * 2**f) for a documented number of fraction bits f. Only these operations are used, so
the result is the same bit for bit on every CPU, SIMD width, BLAS, thread count and OS:

  integer +, -, *, comparisons and arithmetic shifts (int64, bounds below keep them exact);
  float32 matrix products of int8 values over at most 1024 terms: every partial sum is an integer
      below 2**24, so the summation order, FMA use, SIMD width and blocking of the BLAS (or a
      GPU's TF32 tensor cores, which hold int8 exactly) cannot change the result;
  one correctly rounded IEEE-754 operation (x * scale, x / y, sqrt) immediately followed by
      rounding to an integer (to_int: rint, ties to even, saturating at +-2**62): IEEE 754
      fixes that result everywhere;
  lookups in tables built here from Python's `decimal` module (software arithmetic, the same on
      every machine) and linear interpolation between table entries in integers.
No libm function (exp, log, tanh, ...) and no floating-point reduction (sum, mean) is used.

Formats (fraction bits)
  ACT = 12     activations, residual stream, norm outputs, logits (in nats)
  GATE = 24    sigmoid outputs, MoD gates, softplus (the SSM step size dt)
  STATE = 22   the SSM state (stored as int32: |state| < 512.0)
  DECAY = 24   exp(dt * A) of the SSM
Matrix products (W8A8): weights int8 per output row (w ~= q * s), inputs int8 per input row
(x ~= x8 * amax / 127, amax = the row's max |x|), chosen fresh for every row.
Bounds: the residual stream is clamped to |q| < 2**RESID_BITS, SSM inputs to 2**MATMUL_BITS, the
SSM state to |q| < 2**STATE_BITS (saturating, documented in docs/codec.md).
"""
from __future__ import annotations

from decimal import Decimal, localcontext
from functools import cache

import numpy as np

from . import device

ACT = 12
GATE = 24
STATE = 22
DECAY = 24
ONE_ACT = 1 << ACT
ONE_GATE = 1 << GATE
MATMUL_BITS = 20            # |x| < 256.0 entering a product
RESID_BITS = 24             # |h| < 4096.0 in the residual stream
STATE_BITS = 31             # |state| < 512.0: int32 storage halves the state's memory traffic
W8 = 127                    # int8 weights and matmul inputs, symmetric
W16 = 32767                 # int16 weights of the depthwise conv
CHUNK_K = 1024              # 1024 * 127 * 127 < 2**24: exact float32 sums of int8 products

TABLE_LO = -16              # sigmoid / softplus tables cover [-16, 16) in steps of 1/64
TABLE_HI = 16
TABLE_STEP_BITS = 6         # 64 entries per unit
_PREC = 24


# the ufunc np.clip ends in: np.clip's own checks (is a Python-int bound outside the dtype?) cost
# ~3.5 us per call, ~10% of a small-batch engine step; called directly where the bounds fit
try:
    from numpy._core.umath import clip as _UCLIP
except ImportError:       # a numpy that moved it: the same values, a little slower
    _UCLIP = np.clip


def iclip(x: np.ndarray, lo: int, hi: int) -> np.ndarray:
    """np.clip(x, lo, hi) for int64 arrays (or floats) with bounds inside int64."""
    if type(x) is np.ndarray and x.dtype.kind in "if" and x.dtype.itemsize == 8:
        return _UCLIP(x, lo, hi)
    return np.clip(x, lo, hi)


def clamp(x: np.ndarray, bits: int) -> np.ndarray:
    lim = (1 << bits) - 1
    return iclip(x, -lim, lim)


def rshift(x: np.ndarray, k: int) -> np.ndarray:
    """round(x / 2**k), halves rounded up (towards +inf): (x + 2**(k-1)) >> k on int64."""
    if k <= 0:
        return x << -k
    return (x + (1 << (k - 1))) >> k


INT_SAT = float(1 << 62)


def to_int(x: np.ndarray) -> np.ndarray:
    """float64 -> int64: rint (ties to even), saturating at +-2**62 (never an undefined cast)."""
    return iclip(np.rint(x), -INT_SAT, INT_SAT).astype(np.int64)


def quant_rows(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row of ACT-format x as int8 values (float32) and its scale: x ~= x8 * amax / 127,
    amax = max |x| of the row (>= 1), x8 = rint(x * (127 / amax)): one IEEE division per row,
    one IEEE product per value (|x8| <= 127 since |x| <= amax)."""
    x = clamp(x, RESID_BITS)
    amax = np.maximum(np.abs(x).max(axis=-1, keepdims=True), 1)
    return np.rint(x * (127.0 / amax)).astype(np.float32), amax


def matmul8(x8: np.ndarray, wt8: np.ndarray) -> np.ndarray:
    """Exact x8 (R, K) @ wt8 (K, N), both int8 values in float32 -> (R, N) integers (float32,
    or float64 for K > CHUNK_K).
    Up to CHUNK_K terms every partial sum stays below 2**24, so float32 is exact whatever the
    BLAS does; longer products are cut into chunks summed in float64 (also exact)."""
    K = x8.shape[-1]
    dev = device.products()
    if dev is not None:                 # the same integers, from a torch device (device.py)
        acc = dev.matmul(x8, wt8)
        return acc.astype(np.float32) if K <= CHUNK_K else acc
    if K <= CHUNK_K:
        return x8 @ wt8
    acc = np.zeros((x8.shape[0], wt8.shape[1]), dtype=np.float64)
    for k0 in range(0, K, CHUNK_K):
        acc += x8[:, k0:k0 + CHUNK_K] @ wt8[k0:k0 + CHUNK_K]
    return acc


def bmatmul8(x8: np.ndarray, wt8: np.ndarray) -> np.ndarray:
    """Exact batched x8 (G, R, K) @ wt8 (G, K, N) for K <= CHUNK_K (the experts of a mixture),
    float32 like matmul8's short products."""
    dev = device.products()
    if dev is not None:
        return dev.matmul(x8, wt8).astype(np.float32)
    return np.matmul(x8, wt8)


def requant(acc: np.ndarray, amax: np.ndarray, m: np.ndarray, b: np.ndarray | None) -> np.ndarray:
    """ACT-format output of an int8 product: clamp(rint((acc * amax) * m)) (+ b), m = s_w / 127
    per output: acc * amax is an exact integer product, then one rounded IEEE product."""
    y = clamp(to_int((acc.astype(np.float64) * amax) * m), RESID_BITS)
    return y if b is None else y + b


# -- tables (decimal, built once per process) ------------------------------------------------------
def _dec_table(fn, lo: int, hi: int, step_bits: int, frac: int) -> np.ndarray:
    """round(fn(lo + i / 2**step_bits) * 2**frac) for i = 0 .. (hi - lo) * 2**step_bits."""
    n = (hi - lo) << step_bits
    with localcontext() as ctx:
        ctx.prec = _PREC
        one = Decimal(1 << frac)
        den = Decimal(1 << step_bits)
        vals = [int((fn(Decimal(lo) + Decimal(i) / den) * one).to_integral_value())
                for i in range(n + 1)]
    return np.array(vals, dtype=np.int64)


def _sigmoid(x: Decimal) -> Decimal:
    return 1 / (1 + (-x).exp())


def _softplus(x: Decimal) -> Decimal:
    return (1 + x.exp()).ln()


@cache
def sigmoid_table() -> np.ndarray:
    return _dec_table(_sigmoid, TABLE_LO, TABLE_HI, TABLE_STEP_BITS, GATE)


@cache
def softplus_table() -> np.ndarray:
    return _dec_table(_softplus, TABLE_LO, TABLE_HI, TABLE_STEP_BITS, GATE)


@cache
def exp_neg_tables() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """exp(-i), exp(-j / 2**10), exp(-k / 2**20) in Q30 for i < 18, j, k < 2**10."""
    with localcontext() as ctx:
        ctx.prec = _PREC
        one = Decimal(1 << 30)

        def q(v: Decimal) -> int:
            return int((v * one).to_integral_value())
        t1 = [q((-Decimal(i)).exp()) for i in range(18)]
        t2 = [q((-Decimal(j) / 1024).exp()) for j in range(1024)]
        t3 = [q((-Decimal(k) / (1 << 20)).exp()) for k in range(1024)]
    return tuple(np.array(t, dtype=np.int64) for t in (t1, t2, t3))


@cache
def log1p_table(n: int, frac: int, scale_num: int, scale_den_log1p: int) -> np.ndarray:
    """round(log1p(i) / log1p(scale_den_log1p) * scale_num * 2**frac), i < n (cascade features)."""
    with localcontext() as ctx:
        ctx.prec = _PREC
        den = Decimal(1 + scale_den_log1p).ln()
        vals = [int(((Decimal(1 + i).ln() / den) * scale_num * (1 << frac)).to_integral_value())
                for i in range(n)]
    return np.array(vals, dtype=np.int64)


# -- nonlinearities --------------------------------------------------------------------------------
def _interp(table: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Linear interpolation of a [-16, 16) table at ACT-format x (clamped into the table)."""
    span = (TABLE_HI - TABLE_LO) << ACT
    u = iclip(x - (TABLE_LO << ACT), 0, span - 1)
    shift = ACT - TABLE_STEP_BITS
    i = u >> shift
    f = u & ((1 << shift) - 1)
    a = table[i]
    return a + rshift((table[i + 1] - a) * f, shift)


def sigmoid(x: np.ndarray) -> np.ndarray:
    """sigmoid of ACT-format x -> GATE format (0 .. 2**24)."""
    return _interp(sigmoid_table(), x)


def silu(x: np.ndarray) -> np.ndarray:
    """x * sigmoid(x), ACT -> ACT (x clamped to RESID_BITS)."""
    x = clamp(x, RESID_BITS)
    return rshift(x * sigmoid(x), GATE)


def softplus(x: np.ndarray) -> np.ndarray:
    """log(1 + exp(x)) of ACT-format x -> GATE format; x >= 16 gives x itself."""
    y = _interp(softplus_table(), x)
    big = x >= (TABLE_HI << ACT)
    if big.any():
        y = np.where(big, clamp(x, RESID_BITS) << (GATE - ACT), y)
    return y


def exp_neg(x: np.ndarray) -> np.ndarray:
    """exp(-x) for x >= 0 in Q20 -> DECAY format (Q24); 0 beyond x = 18."""
    t1, t2, t3 = exp_neg_tables()
    x = np.maximum(x, 0)
    i = x >> 20
    far = i >= len(t1)
    i = np.minimum(i, len(t1) - 1)
    j = (x >> 10) & 1023
    k = x & 1023
    e = rshift(t1[i] * t2[j], 30)
    e = rshift(e * t3[k], 30)
    e = rshift(e, 30 - DECAY)
    return np.where(far, 0, e)


# -- norms -----------------------------------------------------------------------------------------
def rms_scale(x: np.ndarray, eps: float) -> np.ndarray:
    """sqrt(mean(x**2) + eps * 2**(2 ACT)) per row of x (|x| < 2**RESID_BITS), as float64 (each
    step one IEEE operation on exact integers; deterministic)."""
    ss = np.einsum("...c,...c->...", x, x)                    # exact int64
    c = x.shape[-1]
    return np.sqrt(ss.astype(np.float64) / c + eps * float(1 << (2 * ACT)))


def rms_norm(x: np.ndarray, weight_q: np.ndarray | None, eps: float) -> np.ndarray:
    """RMSNorm of ACT-format rows -> ACT format; weight_q in ACT format (None: no weight).
    out = rint(num * (k / r)), num = x * weight (or x, with k = 2**ACT): one IEEE division per
    row, one IEEE product per value."""
    x = clamp(x, RESID_BITS)
    r = rms_scale(x, eps)[..., None]
    num = x if weight_q is None else x * weight_q             # |.| < 2**40
    return to_int(num * (float(ONE_ACT if weight_q is None else 1) / r))


def layer_norm(x: np.ndarray, eps: float) -> np.ndarray:
    """LayerNorm without affine: (x - mean) / std, mean rounded to an integer first."""
    x = clamp(x, RESID_BITS)
    c = x.shape[-1]
    total = x.sum(axis=-1, keepdims=True)
    mean = (2 * total + c) // (2 * c)                         # round(total / c), exact
    d = clamp(x - mean, RESID_BITS)
    r = rms_scale(d, eps)[..., None]
    return to_int(d * (float(ONE_ACT) / r))
