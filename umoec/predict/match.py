"""Match model: long repeats the byte model cannot see, mixed in by counted outcomes (SSE).

A small byte model with a short memory predicts source code and markup poorly where the text
repeats something from far back (an identifier, an import block, a license header). xz wins there.
The match model finds the most recent earlier occurrence of the last `min_len` bytes (with
`long_len`, of a longer context first; hash tables over every stream's history, shared by all
streams, like the order-2 model's counts), checks how long the match really is, and predicts
the byte that followed it. How far to trust that
prediction is learned while coding, from exact integer counts:

    cell  = (match-length bucket, bucket of the model's own probability p of the predicted byte)
    p'    = (hits[cell] + prior * p) / (tries[cell] + prior)       (16-bit fixed point)
    p'(predicted) = p',  p'(other v) = p(v) * (1 - p') / (1 - p)

so a cell that has not been tried yet leaves the model's distribution as it is, and a cell whose
predictions keep coming true moves toward them. Streams without a match keep the inner
predictor's logits bit for bit. Everything is integer arithmetic plus `int_log` (exactly rounded
IEEE operations, no libm): encoder and decoder, which see the same bytes in the same order,
compute the same logits. The wrapper's fingerprint extends the inner one, so a file written with
the match model cannot be decoded without it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..codec import probs
from ..codec.probs import EXP_TABLE, logit_distances
from ..units import LN2
from .numerics import int_log, ln_mantissa_table
from .protocol import Emit, foresee, parts, start, whole

VERSION = 1
ONE = 1 << 16                                     # probabilities in 16-bit fixed point
LEN_EDGES = np.array([8, 12, 16, 24, 32, 48, 64, 128, 256], dtype=np.int64)
P_EDGES = (np.array([0.01, 0.03, 0.08, 0.15, 0.25, 0.4, 0.55, 0.7, 0.8, 0.9, 0.95, 0.98, 0.99,
                     0.995]) * ONE).astype(np.int64)
N_CELLS = (len(LEN_EDGES) + 1) * (len(P_EDGES) + 1)
MAX_LEN = 1 << 16
LONG_LEN = 12
_MIX = np.uint64(0x9E3779B97F4A7C15)              # Fibonacci hashing (64 bits)
_STEP = np.uint64(0x100000001B3)


@dataclass(frozen=True)
class MatchSettings:
    min_len: int = 5        # bytes hashed to find a candidate; shorter verified matches are ignored
    long_len: int = 0       # also hash this many bytes, looked up first (0 = no second table)
    hash_bits: int = 20     # table of 2**hash_bits candidates (8 MiB at 20)
    check: int = 32         # bytes compared backwards to verify a candidate (its length, capped)
    limit: int = 1023       # a cell's counts are halved when its tries pass this: stays adaptive
    prior: int = 4          # weight of the model's own probability, in observations

    def __post_init__(self):
        if not 2 <= self.min_len <= self.check <= 255:
            raise ValueError("match: need 2 <= min_len <= check <= 255")
        if self.long_len and not self.min_len < self.long_len <= self.check:
            raise ValueError("match: long_len must be 0 or in min_len+1..check")
        if not 10 <= self.hash_bits <= 26:
            raise ValueError("match: hash_bits must be in 10..26")
        if not 16 <= self.limit <= 1 << 20 or not 1 <= self.prior <= 1 << 10:
            raise ValueError("match: limit must be in 16..2**20 and prior in 1..1024")

    @classmethod
    def standard(cls, min_len: int) -> MatchSettings:
        """What the compressor uses for entropy.match_min_len: plus a 12-byte table looked up
        first (measured on held-out stdlib source, fast profile: 1.569 -> 1.552 bpb; 8, 10, 16
        and 24 bytes did less)."""
        return cls(min_len=min_len, long_len=LONG_LEN if min_len < LONG_LEN else 0)

    def describe(self) -> str:
        return (f"umoec.codec.match/{VERSION} min_len={self.min_len} long_len={self.long_len} "
                f"hash_bits={self.hash_bits} "
                f"check={self.check} limit={self.limit} prior={self.prior} "
                f"len_edges={LEN_EDGES.tolist()} p_edges={P_EDGES.tolist()}")


@dataclass
class MatchState:
    hist: np.ndarray        # (B, capacity) uint8: every stream's bytes so far
    t: int                  # bytes known per stream
    tables: list            # per hashed length (long first): (2**hash_bits,) int64 arrays of
                            # 1 + (stream << 32 | position of the byte that followed); 0 empty
                            # (zeroed memory costs nothing until a bucket is written)
    src: np.ndarray         # (B,) int64 packed position of the predicted byte
    length: np.ndarray      # (B,) int64 verified match length, 0 = no match
    pred: np.ndarray        # (B,) int64 predicted byte, -1 none
    cell: np.ndarray        # (B,) int64 SSE cell of the last prediction, -1 none
    hits: np.ndarray        # (N_CELLS,) int64
    tries: np.ndarray       # (N_CELLS,) int64
    predicted: int = 0      # bytes a match predicted / of them right: for reports and tests
    right: int = 0
    started: bool = False   # the first step has no coded byte yet (prev is BOS)


class MatchModel:
    """The match model's state transitions and mixing, vectorised over B streams."""

    def __init__(self, settings: MatchSettings = MatchSettings()):
        self.s = settings
        # a long context is looked up first: its most recent occurrence is a better bet than
        # the most recent occurrence of the short one
        self.lengths = [n for n in (settings.long_len, settings.min_len) if n]

    def init_state(self, n_streams: int) -> MatchState:
        B = n_streams
        return MatchState(hist=np.zeros((B, 1024), dtype=np.uint8), t=0,
                          tables=[np.zeros(1 << self.s.hash_bits, dtype=np.int64)
                                  for _ in self.lengths],
                          src=np.zeros(B, np.int64), length=np.zeros(B, np.int64),
                          pred=np.full(B, -1, np.int64), cell=np.full(B, -1, np.int64),
                          hits=np.zeros(N_CELLS, np.int64), tries=np.zeros(N_CELLS, np.int64))

    # -- after a byte per stream is known ---------------------------------------------------------
    def observe(self, byte: np.ndarray, st: MatchState) -> None:
        """Learn from the bytes just coded, follow or drop matches, find new ones."""
        if st.t == st.hist.shape[1]:
            st.hist = np.concatenate([st.hist, np.zeros_like(st.hist)], axis=1)
        if probs._c is not None:                  # the compiled twin (_probs.c), same integers
            self._observe_c(np.ascontiguousarray(byte, dtype=np.uint8), st)
            return
        used = st.cell >= 0
        if used.any():
            right = st.pred[used] == byte[used]
            np.add.at(st.tries, st.cell[used], 1)
            np.add.at(st.hits, st.cell[used], right.astype(np.int64))
            st.predicted += int(used.sum())
            st.right += int(right.sum())
            over = st.tries > self.s.limit
            if over.any():
                st.tries[over] >>= 1
                st.hits[over] >>= 1
        st.hist[:, st.t] = byte
        st.t += 1
        ok = (st.length > 0) & (st.pred == byte)
        st.length = np.where(ok, np.minimum(st.length + 1, MAX_LEN), 0)
        st.src = np.where(ok, st.src + 1, st.src)
        for n, table in zip(self.lengths, st.tables, strict=True):
            if st.t >= n:
                self._find(st, n, table)

    def _observe_c(self, byte: np.ndarray, st: MatchState) -> None:
        B, cap = st.hist.shape
        tables = [*zip(self.lengths, st.tables, strict=True), (0, None)]
        (n1, t1), (n2, t2) = tables[:2]
        used, right = probs._c.match_observe(
            byte, st.hist, B, cap, st.t, st.src, st.length, st.pred, st.cell, st.hits, st.tries,
            N_CELLS, self.s.limit, self.s.check, self.s.hash_bits, n1, t1, n2, t2)
        st.predicted += used
        st.right += right
        st.t += 1

    def _find(self, st: MatchState, n: int, table: np.ndarray) -> None:
        """Streams with no match of at least n bytes look up their last n bytes' hash in `table`
        and take a verified longer match; then every stream's position is recorded there."""
        B = st.hist.shape[0]
        h = np.zeros(B, dtype=np.uint64)
        for i in range(st.t - n, st.t):
            h = h * _STEP + st.hist[:, i].astype(np.uint64) + np.uint64(1)
        h = ((h * _MIX) >> np.uint64(64 - self.s.hash_bits)).astype(np.int64)
        need = np.flatnonzero(st.length < n)
        if len(need):
            cand = table[h[need]] - 1
            found = cand >= 0
            need, cand = need[found], cand[found]
            if len(need):
                length = self._verify(st, need, cand)
                keep = (length >= n) & (length > st.length[need])
                st.length[need[keep]] = length[keep]
                st.src[need[keep]] = cand[keep]
        here = ((np.arange(B, dtype=np.int64) << 32) | st.t) + 1  # the byte that comes next
        last_h, last_i = np.unique(h[::-1], return_index=True)   # one writer per bucket: the
        table[last_h] = here[::-1][last_i]                        # highest stream, every time

    def _verify(self, st: MatchState, rows: np.ndarray, cand: np.ndarray) -> np.ndarray:
        """Length (<= check) of the common suffix of stream `rows`' history and the history
        before each candidate position."""
        k = np.arange(1, self.s.check + 1, dtype=np.int64)             # (C,)
        cs, cp = cand >> 32, cand & 0xFFFFFFFF
        pos_c = cp[:, None] - k[None, :]                               # (R, C)
        pos_o = st.t - k                                               # (C,)
        valid = (pos_c >= 0) & (pos_o >= 0)[None, :]
        a = st.hist[cs[:, None], np.maximum(pos_c, 0)]
        b = st.hist[rows[:, None], np.maximum(pos_o, 0)[None, :]]
        same = (a == b) & valid
        return np.cumprod(same, axis=1).sum(axis=1).astype(np.int64)

    # -- before the next byte: mix the prediction into the inner logits ------------------------------
    def mix(self, logits: np.ndarray, st: MatchState, lo: int = 0) -> np.ndarray:
        """(R, 256) float32 inner logits of streams lo..lo+R-1 -> logits with the match
        predictions mixed in (each row its own: slices give the whole batch's rows)."""
        at = slice(lo, lo + len(logits))
        st.pred[at] = -1
        st.cell[at] = -1
        rows = np.flatnonzero(st.length[at] > 0)
        if not len(rows):
            return logits
        src = st.src[lo + rows]
        pred = st.hist[src >> 32, src & 0xFFFFFFFF].astype(np.int64)
        if probs._c is not None and logits.dtype == np.float32:   # the compiled twin (_probs.c)
            x = np.ascontiguousarray(logits)
            out, cell = x.copy(), np.empty(len(rows), dtype=np.int64)
            if probs._c.match_mix(x, out, rows, pred, st.length[lo + rows], st.hits, st.tries,
                                  self.s.prior, EXP_TABLE, ln_mantissa_table(), LN2, LEN_EDGES,
                                  P_EDGES, cell, len(x), len(rows), len(EXP_TABLE), N_CELLS,
                                  len(LEN_EDGES), len(P_EDGES)):
                st.pred[lo + rows], st.cell[lo + rows] = pred, cell
                return out
        w = np.take(EXP_TABLE, logit_distances(logits[rows]))          # (R, 256), max 2**30
        total = w.sum(axis=1)
        r = np.arange(len(rows))
        we = w[r, pred]
        p = (we << 16) // total                                        # model's p, 16-bit
        cell = (np.searchsorted(LEN_EDGES, st.length[lo + rows], side="right") * (len(P_EDGES) + 1)
                + np.searchsorted(P_EDGES, p, side="right"))
        pm = (st.hits[cell] * ONE + self.s.prior * p) // (st.tries[cell] + self.s.prior)
        pm = np.clip(pm, 1, ONE - 1)
        mixed = w * (ONE - pm)[:, None]
        mixed[r, pred] = pm * np.maximum(total - we, 1)
        out = logits.astype(np.float32, copy=True)
        out[rows] = int_log(np.maximum(mixed, 1))
        st.pred[lo + rows], st.cell[lo + rows] = pred, cell
        return out


class MatchMixer:
    """A Predictor: an inner predictor's logits with the match model mixed in (see module doc).

    Forwards `adapt` (online adaptation) to the inner predictor when it has one."""

    def __init__(self, inner: Any, settings: MatchSettings = MatchSettings()):
        self.inner = inner
        self.model = MatchModel(settings)
        if callable(getattr(inner, "adapt", None)):
            self.adapt = self._adapt

    def fingerprint(self) -> bytes:
        return bytes(self.inner.fingerprint()) + b"|" + self.model.s.describe().encode()

    @property
    def primer(self) -> bytes:
        """The inner predictor's primer for the mixing stage (b"" if none)."""
        return bytes(getattr(self.inner, "primer", b"") or b"")

    def init_state(self, n_streams: int) -> tuple[Any, MatchState]:
        return self.inner.init_state(n_streams), self.model.init_state(n_streams)

    def init_state_foreseen(self, n_streams: int) -> tuple[Any, MatchState]:
        return start(self.inner, n_streams, foreseen=True), self.model.init_state(n_streams)

    def step(self, prev_bytes: np.ndarray, state: tuple[Any, MatchState]):
        return whole(self.step_parts, prev_bytes, state)

    def step_parts(self, prev_bytes: np.ndarray, state: tuple[Any, MatchState], emit: Emit,
                   meanwhile=None):
        """The inner predictor's slices with the match model mixed in; it learns the previous
        bytes while the inner predictor's other processes compute (predict/protocol.py)."""
        inner_state, st = state
        prev = np.asarray(prev_bytes, dtype=np.int64)

        def observe() -> None:
            if st.started:
                self.model.observe(prev.astype(np.uint8), st)
            st.started = True
            if meanwhile is not None:
                meanwhile()

        inner_state = parts(self.inner, prev, inner_state, lambda lo, hi, logits: emit(
            lo, hi, self.model.mix(np.asarray(logits, dtype=np.float32), st, lo)), observe)
        return inner_state, st

    def foresee(self, next_prev: np.ndarray, state: tuple[Any, MatchState]) -> None:
        foresee(self.inner, next_prev, state[0])

    def _adapt(self, recent: list[bytes], state):
        inner_state, st = state
        return self.inner.adapt(recent, inner_state), st
