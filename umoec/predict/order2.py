"""A classical entropy model: adaptive order-2 byte contexts (interpolated Witten-Bell) in exact
integers, shared by all streams. The codec's tests and benches drive it; its fingerprint text
names its original module and must not change (files name it)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .numerics import LN_BITS, int_log
from .protocol import MAX_STREAMS


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
