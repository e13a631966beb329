"""The cascade in the exact engine: the float model's integer context tables, then its small
mixer in fixed point (see umoec/model/cascade.py for the statistics and the mixer's meaning).

Statistics (pred, run, cnt, has per order) are the very integers of `Cascade.update_stats`; the
features are has (0/1), log1p(run) and log1p(cnt) scaled by 1/log1p(CASCADE_CAP) (a decimal
table), and the pairwise agreement of the predictions, all in ACT format.
"""
from __future__ import annotations

import numpy as np

from ..sizing import CASCADE_CAP, CASCADE_HASH_BITS, CASCADE_ORDERS, VOCAB
from . import kernels
from .fixed import ACT, log1p_table

START = 256
_HASH_MULT = 2654435761
K = len(CASCADE_ORDERS)
SIZES = [VOCAB + 1 if k == 1 else 1 << CASCADE_HASH_BITS for k in CASCADE_ORDERS]
OFFSETS = [sum(SIZES[:i]) for i in range(len(SIZES))]
N_BUCKETS = sum(SIZES)
PAIRS = [(a, b) for a in range(K) for b in range(a + 1, K)]


def init_state(batch: int) -> dict:
    """Zeroed tables (pages untouched until written) hold 1 + the last byte of each bucket."""
    return {"hist": np.full((batch, max(CASCADE_ORDERS)), START, dtype=np.int64),
            "prev": np.zeros((batch, K), dtype=np.int64),
            "last": np.zeros((batch, N_BUCKETS), dtype=np.int16),    # 1 + byte, 0 = none yet
            "run": np.zeros((batch, N_BUCKETS), dtype=np.int16),
            "cnt": np.zeros((batch, N_BUCKETS), dtype=np.int16)}


def _bucket(values: np.ndarray, order: int) -> np.ndarray:
    if order == 1:
        return values
    return ((values * _HASH_MULT) & 0xFFFFFFFF) >> (32 - CASCADE_HASH_BITS)


_ORDERS = np.array(CASCADE_ORDERS, dtype=np.int64)
_OFFSETS = np.array(OFFSETS, dtype=np.int64)


def update_stats(byte: np.ndarray, st: dict, t: int):
    """Record (ctx_{t-1} -> byte), look up ctx_t: -> pred, run, cnt (B, K) int64, has (B, K)."""
    if kernels._c is not None:                 # the compiled twin (_kernels.c), same integers
        B = len(byte)
        pred, run, cnt = (np.empty((B, K), dtype=np.int64) for _ in range(3))
        has = np.empty((B, K), dtype=bool)
        kernels._c.cascade_stats(np.ascontiguousarray(byte, dtype=np.int64), st["hist"], st["prev"],
                                 st["last"], st["run"], st["cnt"], _ORDERS, _OFFSETS, pred, run,
                                 cnt, has, B, st["hist"].shape[1], K, N_BUCKETS, t,
                                 CASCADE_HASH_BITS, CASCADE_CAP)
        return pred, run, cnt, has
    rows = np.arange(len(byte))[:, None]
    if t > 0:
        idx = st["prev"]
        b16 = np.broadcast_to((byte + 1).astype(np.int16)[:, None], idx.shape)
        same = st["last"][rows, idx] == b16
        run = np.where(same, np.minimum(st["run"][rows, idx].astype(np.int64) + 1, CASCADE_CAP), 1)
        cnt = np.minimum(st["cnt"][rows, idx].astype(np.int64) + 1, CASCADE_CAP)
        st["last"][rows, idx] = b16
        st["run"][rows, idx] = run.astype(np.int16)
        st["cnt"][rows, idx] = cnt.astype(np.int16)
    st["hist"] = np.concatenate([byte[:, None], st["hist"][:, :-1]], axis=1)
    cols = []
    for k, off in zip(CASCADE_ORDERS, OFFSETS, strict=True):
        value = sum(st["hist"][:, i] * (VOCAB + 1) ** i for i in range(k))
        cols.append(_bucket(value, k) + off)
    idx = np.stack(cols, axis=1)
    st["prev"] = idx
    last = st["last"][rows, idx].astype(np.int64) - 1
    has = last >= 0
    return (np.maximum(last, 0), st["run"][rows, idx].astype(np.int64),
            st["cnt"][rows, idx].astype(np.int64), has)


class CascadeMixer:
    def __init__(self, t: dict):
        from .model import QLinear
        self.hidden = QLinear(t, "cascade.hidden")
        self.out = QLinear(t, "cascade.out")
        self.log1p = log1p_table(CASCADE_CAP + 1, ACT, 1, CASCADE_CAP)
        self.plan = kernels.cascade_plan(self.hidden, self.out, self.log1p, K)

    def features(self, pred, run, cnt, has) -> np.ndarray:
        one = has.astype(np.int64) << ACT
        agree = [((has[:, a] & has[:, b] & (pred[:, a] == pred[:, b])).astype(np.int64) << ACT)
                 for a, b in PAIRS]
        return np.concatenate([one, self.log1p[run], self.log1p[cnt],
                               np.stack(agree, axis=1)], axis=1)

    def step(self, byte: np.ndarray, st: dict, t: int, thr: int | None):
        """-> alone logits (B, V), boost (B, V) (ACT) and alone (B,) bool (cascade codes alone)."""
        B = len(byte)
        both = kernels.cascade_step(self.plan, byte, st, _ORDERS, _OFFSETS, t, N_BUCKETS,
                                    CASCADE_HASH_BITS, VOCAB)
        if both is not None:                       # the lines below in one compiled call
            alone, boost = both
        else:
            pred, run, cnt, has = update_stats(byte, st, t)
            o = self.out(self.hidden(self.features(pred, run, cnt, has), act_silu=True))  # (B, 2K)
            hasi = has.astype(np.int64)
            beta, gamma = o[:, :K] * hasi, o[:, K:] * hasi
            rows = np.repeat(np.arange(B), K)
            alone = np.zeros((B, VOCAB), dtype=np.int64)
            boost = np.zeros((B, VOCAB), dtype=np.int64)
            np.add.at(alone, (rows, pred.reshape(-1)), beta.reshape(-1))
            np.add.at(boost, (rows, pred.reshape(-1)), gamma.reshape(-1))
        flag = (np.zeros(B, dtype=bool) if thr is None
                else kernels.top_margin(alone, thr, second=False))
        return alone, boost, flag
