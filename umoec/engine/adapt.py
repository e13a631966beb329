"""Online adaptation while coding, exact: a softmax regression on the final head's input, learned
from the bytes just coded and shared by all streams (the balanced profile).

Glossary
  B  streams   C  d_model   V  256 bytes   x  the final norm's output as int8 rows (B, C), plus
  a constant 127 column (an adaptive bias per byte)
  A  (C + 1, V) integer weights, 0 at the start of every file; |A| < 2**A_BITS

Before coding byte t of every stream, the head's logits get    extra = (x A) >> (A_FRAC - 12)
(ACT format). Once the bytes y are known (the next step), every weight moves toward them by one
exact integer step of gradient descent on the cross-entropy of the coded distribution p:
    s[b, v] = round((onehot(y_b)[v] * total_b - w[b, v]) * rate / total_b)     |s| <= rate
(rounded to nearest: flooring would push every unlikely byte down by a whole unit each step)
    A += x^T s
where w = EXP_TABLE[distances] are the integer weights of p (total_b = their sum). Products are
exact in float64 (|x| <= 127, |A| < 2**32, |s| <= 2**20), so encoder and decoder, which see the
same bytes in the same order, keep the same A on every machine. This replaces the float LoRA
steps of the trainer's model, which no two machines would compute alike.
"""
from __future__ import annotations

import numpy as np

from ..codec.probs import DIST_FRAC_BITS, DIST_MAX, EXP_TABLE
from . import kernels
from .fixed import ACT, clamp, rshift

A_FRAC = 24
A_BITS = 32
RATE_MAX = 1 << 20


class HeadAdapter:
    def __init__(self, d_model: int, rate: int):
        if not 1 <= rate <= RATE_MAX:
            raise ValueError(f"adaptation rate must be in 1..{RATE_MAX}, got {rate}")
        self.rate = int(rate)
        self.A = np.zeros((d_model + 1, 256), dtype=np.float64)
        self.last = None                        # (x, logits) of the step before

    @staticmethod
    def features(x8: np.ndarray) -> np.ndarray:
        """(B, C) int8 rows (float32) -> (B, C + 1) float64 with the constant bias column."""
        return np.concatenate([x8.astype(np.float64), np.full((len(x8), 1), 127.0)], axis=1)

    def extra(self, x: np.ndarray) -> np.ndarray:
        """(B, C + 1) features -> (B, V) logit corrections in ACT format (the reference of
        `corrected`'s compiled loop)."""
        return rshift((x @ self.A).astype(np.int64), A_FRAC - ACT)

    def corrected(self, x: np.ndarray, raw: np.ndarray, final: np.ndarray, bits: int) -> np.ndarray:
        """The coder's logits: clamp(raw + extra(x) on the rows of the final head (final (B,)
        bool), bits); the other rows' correction is not computed."""
        if kernels._c is not None:            # the compiled twin: one pass, final rows only
            out = np.empty((len(x), 256), dtype=np.int64)
            kernels._c.adapt_logits(np.ascontiguousarray(x, np.float64), self.A,
                                    np.ascontiguousarray(raw, np.int64),
                                    np.ascontiguousarray(final, bool).view(np.uint8), out,
                                    len(x), x.shape[1], A_FRAC - ACT, bits)
            return out
        return clamp(raw + self.extra(x) * final[:, None], bits)

    def remember(self, x: np.ndarray, logits: np.ndarray, used: np.ndarray) -> None:
        """used (B,) bool: the streams whose coded distribution came from the final head (not
        an early exit, not the cascade alone): only they carry a gradient for A."""
        self.last = (x, logits, used)

    def learn(self, y: np.ndarray) -> None:
        """One exact gradient step toward the bytes y (B,) coded after `remember`."""
        if self.last is None:
            return
        x, logits, used = self.last
        self.last = None
        if kernels._c is not None:            # the compiled twin (_kernels.c), same integers
            kernels._c.adapt_learn(
                np.ascontiguousarray(logits, dtype=np.int64), np.ascontiguousarray(x, np.float64),
                np.ascontiguousarray(y, dtype=np.int64), np.ascontiguousarray(used, dtype=bool),
                self.A, EXP_TABLE, len(y), x.shape[1], len(EXP_TABLE), self.rate, A_BITS,
                ACT - DIST_FRAC_BITS, DIST_MAX)
            return
        from .model import distances
        w = EXP_TABLE[distances(logits)]                                   # (B, V) <= 2**30
        total = w.sum(axis=1, keepdims=True)
        g = -w
        g[np.arange(len(y)), y] += total[:, 0]
        s = (2 * g * self.rate + total) // (2 * total)                     # rounded, |s| <= rate
        s[~used] = 0
        self.A = clamp((self.A + x.T @ s.astype(np.float64)).astype(np.int64),
                       A_BITS).astype(np.float64)
