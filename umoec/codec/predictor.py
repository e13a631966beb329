"""What the codec drives: a byte predictor in step form, and a classical one (order-2 counts).

Glossary: B = streams (the batch the predictor is stepped with, fixed for a whole file);
prev_bytes (B,) int64 = the byte each stream coded at the previous step (BOS = 0 at the first
step, 0 for a stream that has ended); logits (B, 256) float32, natural-log scale.

The codec calls, identically when encoding and decoding:
    state = p.init_state(B)
    for every step: logits, state = p.step(prev_bytes, state)      # then codes one byte per stream
    every `adapt_every` coded bytes (if > 0 and p has `adapt`): state = p.adapt(recent, state)
where recent[i] is the bytes stream i coded since the previous adaptation round.
`fingerprint()` must change whenever any of weights, config or numerics (library versions,
threads, dtype) could change the logits; the container stores its sha256 and the decoder refuses
a file whose fingerprint differs.
"""
from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal, localcontext
from functools import lru_cache
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ..units import LN2

BOS = 0
MAX_STREAMS = 1 << 15


@runtime_checkable
class Predictor(Protocol):
    def init_state(self, n_streams: int) -> Any: ...

    def step(self, prev_bytes: np.ndarray, state: Any) -> tuple[Any, Any]: ...

    def fingerprint(self) -> bytes: ...


@runtime_checkable
class AdaptivePredictor(Predictor, Protocol):
    def adapt(self, recent: list[bytes], state: Any) -> Any: ...


# ---------------------------------------------------------------------------------------------
# Deterministic natural log of positive int64 weights (no libm): ln W = e*ln2 + ln(mantissa).

LN_BITS = 12


@lru_cache(maxsize=1)
def _ln_mantissa_table() -> np.ndarray:
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
    return (expo * LN2 + _ln_mantissa_table()[idx]).astype(np.float32)


# ---------------------------------------------------------------------------------------------

@dataclass
class Order2State:
    c0: np.ndarray        # (256,) counts, order 0
    c1: np.ndarray        # (256, 256) counts by previous byte
    c2: np.ndarray        # (65536, 256) counts by the previous two bytes
    n: list               # totals per context, per order: (1,), (256,), (65536,)
    u: list               # distinct bytes seen per context, per order
    p1: np.ndarray        # (B,) previous byte of each stream
    p2: np.ndarray        # (B,) the byte before it
    started: bool = False


class Order2Predictor:
    """Adaptive order-2 context model, interpolated Witten-Bell, exact integer counts.

    All streams share one set of counts (updated after every step with every stream's byte, in
    stream order), so the model learns B times faster than per-stream tables would. Estimate for
    a context of order k with counts c, total n and u distinct bytes seen:
        P_k(s) = (c[s] + u * P_{k-1}(s)) / (n + u),  P_0(s) = (c0[s] + 1) / (n0 + 256),
    kept as int64 numerators with a per-row common denominator, then logits = ln(numerator).
    Counts of a context are halved (rounding up) when its total passes `limit`, which keeps the
    model adaptive and the integers small: every numerator stays below 2**50.
    """

    LIMITS = (1 << 16, 1 << 16, 1 << 14)

    def __init__(self, limit2: int = 1 << 14):
        if not 16 <= limit2 <= 1 << 14:
            raise ValueError(f"limit2 must be in 16..{1 << 14}, got {limit2}")
        self.limits = (self.LIMITS[0], self.LIMITS[1], limit2)

    def fingerprint(self) -> bytes:
        return f"umoec.codec.Order2Predictor/1 limits={self.limits} ln_bits={LN_BITS}".encode()

    def init_state(self, n_streams: int) -> Order2State:
        if not 1 <= n_streams <= MAX_STREAMS:      # uint16 counts: limit2 + one byte per stream
            raise ValueError(f"Order2Predictor supports 1..{MAX_STREAMS} streams, got {n_streams}")
        return Order2State(
            c0=np.zeros(256, dtype=np.int64), c1=np.zeros((256, 256), dtype=np.int32),
            c2=np.zeros((1 << 16, 256), dtype=np.uint16),
            n=[np.zeros(1, np.int64), np.zeros(256, np.int64), np.zeros(1 << 16, np.int64)],
            u=[np.zeros(1, np.int64), np.zeros(256, np.int64), np.zeros(1 << 16, np.int64)],
            p1=np.zeros(n_streams, dtype=np.int64), p2=np.zeros(n_streams, dtype=np.int64))

    def _update(self, s: Order2State, prev: np.ndarray) -> None:
        tables = (s.c0[None, :], s.c1, s.c2)
        ctxs = (np.zeros_like(prev), s.p1, (s.p2 << 8) | s.p1)
        for order, (table, ctx) in enumerate(zip(tables, ctxs, strict=True)):
            np.add.at(table, (ctx, prev), 1)
            rows = np.unique(ctx)
            block = table[rows].astype(np.int64)
            over = block.sum(axis=1) > self.limits[order]
            if over.any():
                block[over] = (block[over] + 1) >> 1
                table[rows[over]] = block[over]
            s.n[order][rows] = block.sum(axis=1)
            s.u[order][rows] = (block > 0).sum(axis=1)

    def step(self, prev_bytes: np.ndarray, state: Order2State) -> tuple[np.ndarray, Order2State]:
        prev = np.asarray(prev_bytes, dtype=np.int64)
        if state.started:
            self._update(state, prev)
            state.p2, state.p1 = state.p1, prev
        state.started = True
        ctx2 = (state.p2 << 8) | state.p1
        w = (state.c0 + 1)[None, :].repeat(len(prev), axis=0)          # (B, 256) numerators
        den = np.full((len(prev), 1), int(state.n[0][0]) + 256, dtype=np.int64)
        for c, n, u in ((state.c1[state.p1], state.n[1][state.p1], state.u[1][state.p1]),
                        (state.c2[ctx2], state.n[2][ctx2], state.u[2][ctx2])):
            seen = (n > 0)[:, None]
            w = np.where(seen, c.astype(np.int64) * den + u[:, None] * w, w)
            den = np.where(seen, (n + u)[:, None] * den, den)
        return int_log(w), state
