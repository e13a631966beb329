"""The engine's hot loops, each as a plain numpy reference and, when built, its compiled twin.

    quant_rows   rows into int8 values + scale            (before every matrix product)
    requant      int8 products back into ACT (+ SiLU)     (after every matrix product)
    norm_quant   RMSNorm / AdaLN LayerNorm, into int8     (the norms before the products)
    mixer_core   the SSM mixer between in_proj and its gated norm: conv, SiLU, softplus, decay,
                 state update, readout, gate
    matmul8      the int8 products themselves, where the CPU has AVX-512 (int32 sums of 16-bit
    bmatmul8     pairs, on weights packed once by pack8); numpy's float32 BLAS elsewhere
The compiled module `_kernels` (from _kernels.c, built by pip) does the same integer arithmetic
in one pass over memory; tests/umoec/engine/test_kernels.py checks that both give identical
integers on random and extreme inputs. UMOEC_ENGINE_KERNELS=numpy forces the references.
"""
from __future__ import annotations

import os

import numpy as np

from . import device
from . import fixed as fx
from .fixed import (
    ACT,
    DECAY,
    GATE,
    MATMUL_BITS,
    RESID_BITS,
    STATE,
    STATE_BITS,
    clamp,
    exp_neg,
    rshift,
    silu,
    softplus,
)

U_FRAC = 20                 # dt * x kept in Q20 before it meets B
U_BITS = 31                 # ... and within int32 (|dt x| < 2048.0), like the state
DT_MAX = 64 << GATE         # dt clamped to [0, 64]: every product below stays inside int64
A_FRAC = 16                 # A = exp(A_log) in Q16 (quantize.py)
NORM_EPS = 1e-5             # RMSNorm eps of the float model
LN_EPS = 1e-6               # AdaLN's LayerNorm eps

_c = None
if os.environ.get("UMOEC_ENGINE_KERNELS", "") != "numpy":
    try:  # the compiled kernels, when pip built them
        from . import _kernels as _c
    except ImportError:
        _c = None


def backend() -> str:
    return "c" if _c is not None else "numpy"


def threads() -> int:
    """Threads the compiled SSM mixer splits its streams over: the BLAS's count (set before
    numpy loads by umoec/compress/threads.py), 1 when unset. Results never depend on it."""
    try:
        n = os.environ.get("UMOEC_ENGINE_THREADS") or os.environ.get("OPENBLAS_NUM_THREADS", "1")
        return max(1, min(16, int(n)))
    except ValueError:
        return 1


def _eps2(eps: float) -> float:
    return eps * float(1 << (2 * ACT))


# -- rows into int8 and back ---------------------------------------------------------------------------
def quant_rows(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(R, C) int64 -> int8 values (R, C) float32, amax (R, 1) int64 (fixed.quant_rows)."""
    if _c is None:
        return fx.quant_rows(x)
    x = np.ascontiguousarray(x, dtype=np.int64)
    R, C = x.shape
    x8 = np.empty((R, C), dtype=np.float32)
    amax = np.empty((R, 1), dtype=np.int64)
    _c.quant_rows(x, x8, amax, R, C)
    return x8, amax


def requant(acc: np.ndarray, amax: np.ndarray, m: np.ndarray, b: np.ndarray | None,
            act_silu: bool = False) -> np.ndarray:
    """fixed.requant, then SiLU when act_silu. acc (R, N) with m (N,), or a batch of groups
    acc (G, R, N) with amax (G, R, 1) and m (G, N) (the experts of a mixture)."""
    if _c is None or acc.dtype != np.float32:
        mm = m if acc.ndim == 2 else m[:, None, :]
        y = fx.requant(acc, amax, mm, b)
        return silu(y) if act_silu else y
    shape = acc.shape
    out = np.empty(shape, dtype=np.int64)
    if out.size == 0:                         # no rows (the compiled loop needs a group of one)
        return out
    N = shape[-1]
    R = acc.size // N
    _c.requant(np.ascontiguousarray(acc), np.ascontiguousarray(amax), np.ascontiguousarray(m), b,
               out, R, N, 1 if act_silu else 0, fx.sigmoid_table() if act_silu else None,
               R if acc.ndim == 2 else shape[1])
    return out


def modulate_ref(x: np.ndarray, shift: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """AdaLN: LayerNorm (no affine) of x, then x * (1 + scale) + shift, in ACT format."""
    return rshift(fx.layer_norm(x, LN_EPS) * ((1 << ACT) + scale), ACT) + shift


def norm_quant(x: np.ndarray, weight: np.ndarray | None = None,
               mod: tuple | None = None) -> tuple[np.ndarray, np.ndarray]:
    """RMSNorm(x) * weight (mod None), or AdaLN's modulated LayerNorm (mod = (shift, scale),
    each (C,) within RESID_BITS), then into int8 rows."""
    if _c is None:
        y = fx.rms_norm(x, weight, NORM_EPS) if mod is None else modulate_ref(x, *mod)
        return fx.quant_rows(y)
    x = np.ascontiguousarray(x, dtype=np.int64)
    R, C = x.shape
    x8 = np.empty((R, C), dtype=np.float32)
    amax = np.empty((R, 1), dtype=np.int64)
    tmp = np.empty(C, dtype=np.int64)
    if mod is None:
        _c.norm_quant(x, weight, None, None, _eps2(NORM_EPS), 0, x8, amax, tmp, R, C)
    else:
        _c.norm_quant(x, None, mod[0], mod[1], _eps2(LN_EPS), 1, x8, amax, tmp, R, C)
    return x8, amax


# -- int8 products -------------------------------------------------------------------------------------
def pack8(wt: np.ndarray) -> np.ndarray | None:
    """(K, N) or (G, K, N) weights (int8 values in float32, as QLinear.wt) -> mm8's packed int16
    layout (_kernels.c): (G, ceil(N/16), ceil(K/2), 32). None where mm8 is not used (use_mm8)
    or for K > CHUNK_K: then the products go through fixed.matmul8 (BLAS)."""
    if not use_mm8() or wt.shape[-2] > fx.CHUNK_K:
        return None
    K, N = wt.shape[-2:]
    Kp, NB = (K + 1) // 2, -(-N // 16)
    w = np.zeros((wt.size // (K * N), 2 * Kp, NB * 16), dtype=np.int16)
    w[:, :K, :N] = wt.reshape(-1, K, N)
    # wp[g, nb, kp, 2j + t] = w[g, 2kp + t, 16nb + j]
    return np.ascontiguousarray(w.reshape(-1, Kp, 2, NB, 16).transpose(0, 3, 1, 4, 2)
                                .reshape(-1, NB, Kp, 32))


def matmul8(x8: np.ndarray, wt: np.ndarray, wp: np.ndarray | None) -> np.ndarray:
    """fixed.matmul8(x8, wt), from the packed weights `wp` (pack8(wt)) when there are any."""
    if wp is None or _c is None or device.products() is not None:
        return fx.matmul8(x8, wt)
    return _mm8(x8, wp, wt.shape[-1])


def linear8(x8: np.ndarray, amax: np.ndarray, wt: np.ndarray, wp: np.ndarray | None,
            m: np.ndarray, b: np.ndarray | None, act_silu: bool = False) -> np.ndarray:
    """requant(matmul8(x8, wt, wp), amax, m, b, act_silu) for rows x8 (R, K): one compiled call
    where mm8 makes the products (a step has ~20 of these; two calls and their wrappers each
    cost more than the products of a few rows)."""
    if wp is None or _c is None or x8.ndim != 2 or device.products() is not None:
        return requant(matmul8(x8, wt, wp), amax, m, b, act_silu)
    R, K = x8.shape
    out = np.empty((R, wt.shape[-1]), dtype=np.int64)
    _c.linear8(np.ascontiguousarray(x8, dtype=np.float32), wp, np.ascontiguousarray(amax), m, b,
               out, R, K, wt.shape[-1], 1 if act_silu else 0,
               fx.sigmoid_table() if act_silu else None)
    return out


def bmatmul8(x8: np.ndarray, wt: np.ndarray, wp: np.ndarray | None) -> np.ndarray:
    """fixed.bmatmul8(x8, wt) for x8 (G, R, K) and wt (G, K, N), from `wp` = pack8(wt)."""
    if wp is None or _c is None or device.products() is not None:
        return fx.bmatmul8(x8, wt)
    return _mm8(x8, wp, wt.shape[-1])


def _mm8(x8: np.ndarray, wp: np.ndarray, n: int) -> np.ndarray:
    """x8 (R, K) or (G, R, K) times the G packed weight matrices of wp -> (.., R, n) float32."""
    R, K = x8.shape[-2:]
    out = np.empty((*x8.shape[:-1], n), dtype=np.float32)
    _c.mm8(np.ascontiguousarray(x8, dtype=np.float32), wp, out, wp.shape[0], R, K, n)
    return out


# Where mm8 is taken: with its products a block's whole step runs in one compiled call (block_plan),
# which outweighs the products alone. AVX-512: products 27-35 us against OpenBLAS 35 (64 x 96 x
# 419); AVX2 on an AVX2-only AMD EPYC: products 1.0-1.2x BLAS, whole files fast 1.34-1.57x,
# turbo 1.03-1.10x (docs/compress.md)
MM8_FASTER = ("avx512-vnni", "avx512", "avx2")


def mm8_path() -> str:
    """The instruction set the compiled products would use here ("none": not built)."""
    return _c.mm8_path() if _c is not None else "none"


def use_mm8() -> bool:
    """Whether models loaded now take their products from mm8: where it is faster than BLAS, or
    where UMOEC_MM8 names a path (scalar, avx2, avx512, avx512-vnni; "blas": never). Either way
    the products are the same integers."""
    forced = os.environ.get("UMOEC_MM8", "")
    if _c is None or forced == "blas":
        return False
    return bool(forced) or mm8_path() in MM8_FASTER


# -- the SSM mixer ---------------------------------------------------------------------------------------
def ssm_step_ref(ssm, rows, x, dt, A, Bm, Cm, D):
    """h = decay h + u B (per state n); y = C . h + D x.  ssm (B, N, H, P) int32 STATE, updated in place
    at rows; x (R, H, P) ACT, dt (R, H) GATE, Bm/Cm (R, N) -> y (R, H, P) ACT."""
    dt = np.clip(dt, 0, DT_MAX)
    decay = exp_neg(rshift(dt * A, GATE + A_FRAC - 20))                 # (R, H) DECAY
    x = clamp(x, MATMUL_BITS)
    u = clamp(rshift(dt[:, :, None] * x, GATE + ACT - U_FRAC), U_BITS)   # (R, H, P) Q20
    Bm, Cm = clamp(Bm, MATMUL_BITS), clamp(Cm, MATMUL_BITS)
    h = ssm[rows].astype(np.int64)                                        # (R, N, H, P)
    inc = rshift(u[:, None] * Bm[:, :, None, None], U_FRAC + ACT - STATE)
    h = clamp(rshift(decay[:, None, :, None] * h, DECAY) + inc, STATE_BITS)
    ssm[rows] = h.astype(np.int32)
    y = rshift((Cm[:, :, None, None] * h).sum(axis=1), STATE)             # (R, H, P) ACT
    return y + rshift(D[None, :, None] * x, ACT)


def mixer_core_ref(acc, amax, blk, conv, ssm, rows) -> np.ndarray:
    """in_proj products (R, O) -> y * silu(z) (R, E), the input of the mixer's gated RMSNorm;
    conv (B, K-1, ch) and ssm (B, N, H, P), both int32, are updated in place at rows."""
    d = blk.d
    v = fx.requant(acc, amax, blk.in_proj.m, None)
    z = v[:, :d.d_inner]
    xbc = clamp(v[:, d.d_inner:d.d_inner + d.conv_channels], MATMUL_BITS)
    dt = v[:, d.d_inner + d.conv_channels:]
    window = conv[rows].astype(np.int64)                                  # (R, K-1, ch)
    taps = blk.conv_taps
    K = taps.shape[0]
    t = xbc * taps[K - 1]
    for k in range(K - 1):
        t = t + window[:, k] * taps[k]
    y = fx.to_int(t.astype(np.float64) * blk.conv_s) + blk.conv_b
    if K > 1:
        conv[rows] = np.concatenate([window[:, 1:], xbc[:, None]], axis=1).astype(np.int32)
    xs = silu(y)
    dt = softplus(dt + blk.dt_bias)                                       # (R, H) GATE
    x = xs[:, :d.d_inner].reshape(-1, d.n_heads, d.head_dim)
    Bm = xs[:, d.d_inner:d.d_inner + d.d_state]
    Cm = xs[:, d.d_inner + d.d_state:]
    y = ssm_step_ref(ssm, rows, x, dt, blk.A, Bm, Cm, blk.D)
    return rshift(y.reshape(len(v), -1) * silu(z), ACT)


def mixer_core(acc, amax, blk, conv, ssm, rows) -> np.ndarray:
    if _c is None or acc.dtype != np.float32:
        return mixer_core_ref(acc, amax, blk, conv, ssm, rows)
    d = blk.d
    R = len(rows)
    E, N, H, P, K = d.d_inner, d.d_state, d.n_heads, d.head_dim, d.d_conv
    ch = d.conv_channels
    out = np.empty((R, E), dtype=np.int64)
    T = blk.threads or threads()
    scratch = np.empty(T * (d.in_proj_out + ch + 3 * E + H), dtype=np.int64)
    t1, t2, t3 = fx.exp_neg_tables()
    _c.mixer_core(np.ascontiguousarray(acc), np.ascontiguousarray(amax), blk.in_proj.m,
                  np.ascontiguousarray(rows, dtype=np.int64), conv, blk.conv_taps, blk.conv_s,
                  blk.conv_b, blk.dt_bias, blk.A, blk.D, ssm, fx.sigmoid_table(),
                  fx.softplus_table(), t1, t2, t3, out, scratch, R, conv.shape[0] if K > 1 else
                  ssm.shape[0], E, N, H, P, K, T)
    return out


# -- mixture of experts -----------------------------------------------------------------------------------
def moe_route_ref(s: np.ndarray, bias: np.ndarray, k: int):
    """Top-k experts of s + bias per row (ties: lower index first), gates s / sum in Q15 (floor),
    each slot's rank among the slots of its expert (row by row) and the experts' counts."""
    X = s.shape[1]
    chosen = np.argsort(-(s + bias), axis=1, kind="stable")[:, :k]
    sc = np.take_along_axis(s, chosen, axis=1)
    gate = (sc << 15) // np.maximum(sc.sum(axis=1, keepdims=True), 1)
    slots = chosen.reshape(-1)
    counts = np.bincount(slots, minlength=X)
    rank = np.empty_like(slots)
    order = np.argsort(slots, kind="stable")
    rank[order] = np.arange(len(slots)) - np.repeat(np.cumsum(counts) - counts, counts)
    return chosen, gate, rank.reshape(chosen.shape), counts


def moe_route(s: np.ndarray, bias: np.ndarray, k: int):
    if _c is None:
        return moe_route_ref(s, bias, k)
    R, X = s.shape
    chosen, gate, rank = (np.empty((R, k), dtype=np.int64) for _ in range(3))
    counts = np.empty(X, dtype=np.int64)
    _c.moe_route(np.ascontiguousarray(s), bias, chosen, gate, rank, counts, R, X, k)
    return chosen, gate, rank, counts


def moe_pack(x8, amax, chosen, rank, X: int, cap: int):
    """Each slot's int8 row into its expert's padded batch (X, cap, C); padding rows are 0."""
    R, k = chosen.shape
    C = x8.shape[1]
    xin = np.zeros((X, cap, C), dtype=np.float32)
    ain = np.ones((X, cap, 1), dtype=np.int64)
    if _c is None:
        src = np.arange(R * k) // k
        xin[chosen.reshape(-1), rank.reshape(-1)] = x8[src]
        ain[chosen.reshape(-1), rank.reshape(-1)] = amax[src]
    else:
        _c.moe_pack(np.ascontiguousarray(x8), np.ascontiguousarray(amax), chosen, rank, xin, ain,
                    R, C, k, X, cap)
    return xin, ain


def moe_combine(ye, chosen, rank, gate) -> np.ndarray:
    """y[r] = sum_j round(ye[chosen[r, j], rank[r, j]] * gate[r, j] / 2**15)."""
    R, k = chosen.shape
    X, cap, C = ye.shape
    if _c is None:
        picked = ye[chosen.reshape(-1), rank.reshape(-1)]
        return rshift(picked * gate.reshape(-1, 1), 15).reshape(R, k, C).sum(axis=1)
    y = np.empty((R, C), dtype=np.int64)
    _c.moe_combine(np.ascontiguousarray(ye), chosen, rank, gate, y, R, C, k, X, cap)
    return y


# -- a whole block step ----------------------------------------------------------------------------------
def block_plan(blk):
    """A block's weights held by the compiled block step (_kernels.c block_plan), or None where
    the block stays on the Python path: no compiled kernels, cross-attention, or a product not
    made by mm8 (the BLAS path, experts too long for one batch)."""
    if _c is None or blk.xattn is not None:
        return None
    d, moe = blk.d, blk.kind != "D"
    lins = [blk.in_proj, blk.out_proj]
    if moe:
        if blk.experts is not None or blk.w1p is None or blk.w2p is None:
            return None
        lins += [blk.router, *(blk.shared or ())]
    else:
        lins += [blk.w1, blk.w2]
    if blk.mod_router is not None:
        lins.append(blk.mod_router)
    if any(lin.wp is None for lin in lins):
        return None
    none3 = (None, None, None)
    lin = lambda q: (q.wp, q.m, q.b)  # noqa: E731
    dense = none3 + none3 if moe else (*lin(blk.w1), *lin(blk.w2))
    experts = ((*lin(blk.router), blk.moe_bias, blk.w1p, blk.m1, blk.w2p, blk.m2) if moe
               else none3 + (None,) * 5)
    shared = (*lin(blk.shared[0]), *lin(blk.shared[1])) if moe and blk.shared else none3 + none3
    arrays = (blk.norm1, blk.norm2, blk.in_proj.wp, blk.in_proj.m, blk.conv_taps, blk.conv_s,
              blk.conv_b, blk.dt_bias, blk.A, blk.D, blk.norm, *lin(blk.out_proj), *dense,
              *experts, *shared, fx.sigmoid_table(), fx.softplus_table(), *fx.exp_neg_tables(),
              *(lin(blk.mod_router) if blk.mod_router is not None else none3))
    dims = (d.d_model, d.d_inner, d.d_state, d.n_heads, d.head_dim, d.d_conv, int(moe),
            0 if moe else blk.w1.n_out, d.n_routed if moe else 0, d.top_k if moe else 0,
            blk.w1t.shape[2] if moe else 0,
            blk.shared[0].n_out if moe and blk.shared else 0)
    return _c.block_plan(tuple(arrays), tuple(int(v) for v in dims))


def cascade_plan(hidden, out, log1p: np.ndarray, K: int):
    """The cascade mixer's two products (QLinear), its features' log1p table and K orders held
    by the compiled cascade step (_kernels.c cascade_plan), or None where the mixer stays on the
    Python path (no compiled kernels, a product not made by mm8)."""
    if _c is None or hidden.wp is None or out.wp is None:
        return None
    return _c.cascade_plan((hidden.wp, hidden.m, hidden.b, out.wp, out.m, out.b,
                            np.ascontiguousarray(log1p, dtype=np.int64), fx.sigmoid_table()),
                           K, hidden.n_out, len(log1p) - 1)


def cascade_step(plan, byte, st: dict, orders, offsets, t: int, n_buckets: int, hash_bits: int,
                 vocab: int):
    """CascadeMixer.step's statistics, features and mixer in one compiled call -> (alone, boost)
    (B, vocab) int64; the tables of st are updated in place. None where it cannot run (no
    plan, the references forced, products on a device): then the Python lines run."""
    if plan is None or _c is None or device.products() is not None:
        return None
    B = len(byte)
    alone = np.empty((B, vocab), dtype=np.int64)
    boost = np.empty((B, vocab), dtype=np.int64)
    _c.cascade_step(plan, np.ascontiguousarray(byte, dtype=np.int64), st["hist"], st["prev"],
                    st["last"], st["run"], st["cnt"], orders, offsets, alone, boost, B,
                    st["hist"].shape[1], n_buckets, vocab, t, hash_bits)
    return alone, boost


def head_plan(unembed):
    """The unembedding (a QLinear) and the codec's exp table held by the compiled early exit
    (_kernels.c head_plan), or None where the exits stay on the Python path."""
    from ..codec.probs import EXP_TABLE
    if _c is None or unembed.wp is None or unembed.n_out != 256:
        return None
    return _c.head_plan(unembed.wp, unembed.m, unembed.b, EXP_TABLE, unembed.n_in,
                        unembed.n_out, len(EXP_TABLE))


def exit_apply(plan, h, alive, norm, thr: int):
    """An early exit in one compiled call (ExactModel._exit's lines): the rows still alive
    (alive (B,) bool, updated in place) whose exit head's p1 - p2 >= thr / 2**16 leave ->
    (their rows, their exit logits (n, V)); None where it cannot run (no plan, the references
    forced, products on a device, h or alive not contiguous): then the Python lines run."""
    if (plan is None or _c is None or device.products() is not None or h.dtype != np.int64
            or not h.flags.c_contiguous or alive.dtype != bool or not alive.flags.c_contiguous
            or not alive.flags.writeable):
        return None
    B = len(h)
    rows = np.empty(B, dtype=np.int64)
    le = np.empty((B, 256), dtype=np.int64)
    n = _c.exit_apply(plan, h, alive.view(np.uint8), norm, int(thr), rows, le, B)
    return rows[:n], le[:n]


def block_apply(plan, h, conv, ssm, alive, mod, n_threads: int | None) -> int | None:
    """A block's turn in ExactModel.core in one compiled call (Block.advance's lines): the rows
    still alive, in a MoD block those whose router score is > 0, go through the block and h
    (B, C) int64 takes their gated residual in place. -> how many rows went through; None where
    it cannot run (no plan, the references forced, products on a device, h not a contiguous
    int64 array): then Block.advance runs its Python lines."""
    if (plan is None or _c is None or device.products() is not None or h.dtype != np.int64
            or not h.flags.c_contiguous or not h.flags.writeable):
        return None
    return _c.block_apply(plan, h, conv, ssm, np.ascontiguousarray(alive, dtype=bool).view(np.uint8),
                          mod, len(h), n_threads or threads())


# -- counters shared by the split's processes -------------------------------------------------------------
def seq_publish(counters: np.ndarray, at: int, value: int, flag: int = -1) -> bool:
    """counters[at] = value, after every write before it; then whether counters[flag] says the
    other side sleeps (it needs a message). Without the compiled module always True: every
    hand-off then goes through the pipe."""
    if _c is None:
        counters[at] = value
        return True
    return _c.seq_publish(counters, at, value, flag)


def seq_sleep(counters: np.ndarray, flag: int, at: int, target: int) -> bool:
    """True when counters[at] has reached target; else False, with counters[flag] = 1 telling
    the other side to send a message after its next seq_publish (this side sleeps for it)."""
    if _c is None:
        return bool(counters[at] >= target)
    return _c.seq_sleep(counters, flag, at, target)


def seq_wait(counters: np.ndarray, at: int, target: int, seconds: float) -> bool:
    """Whether counters[at] reaches target within `seconds` of spinning (compiled; without the
    compiled module never: the pipe carries every hand-off)."""
    if _c is None:
        return False
    return _c.seq_wait(counters, at, target, seconds)


# -- softmax confidence -----------------------------------------------------------------------------------
def top_margin(logits: np.ndarray, thr: int, second: bool) -> np.ndarray:
    """(R,) bool: p1 - p2 (second) or p1 of softmax(logits) >= thr / 2**16, from the codec's
    integer exp table (model.top_margin_at_least is the reference)."""
    from ..codec.probs import EXP_TABLE
    if _c is None:
        from .model import top_margin_at_least
        return top_margin_at_least(logits, thr, second)
    R, V = logits.shape
    flags = np.empty(R, dtype=np.uint8)
    _c.top_margin(np.ascontiguousarray(logits, dtype=np.int64), EXP_TABLE, flags, int(thr),
                  1 if second else 0, R, V, len(EXP_TABLE))
    return flags.astype(bool)


__all__ = [
    "RESID_BITS",
    "backend",
    "block_apply",
    "block_plan",
    "cascade_plan",
    "cascade_step",
    "exit_apply",
    "head_plan",
    "mixer_core",
    "moe_combine",
    "moe_pack",
    "moe_route",
    "norm_quant",
    "quant_rows",
    "requant",
    "top_margin",
]
