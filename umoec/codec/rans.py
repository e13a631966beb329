"""Interleaved rANS over B lanes, vectorised with numpy, plus a scalar reference coder.

Glossary: W = state width in bits (entropy.precision, 32 or 64); b = W/2 = bits per emitted word;
L = 2**b = lower bound of a normalised state, states live in [L, 2**W); n = prob_precision
(n <= b, so one word of renormalisation always suffices); M = 2**n; T = steps in a block;
k_t = counts[t] = lanes that code a symbol at step t (always a prefix 0..k_t-1, non-increasing).

Encode (reverse order): if x >= f << (W - n): emit x mod 2**b, x >>= b; then
x = (x // f) << n | (x % f) + start.   Decode (forward): slot = x mod M, find the symbol,
x = f * (x >> n) + slot - start; if x < L: x = x << b | next word.

Block payload, little-endian words of b bits, in the order the decoder reads them:
  [final state of lane 0: low word, high word] ... [lane k_0-1]   (the encoder's flush)
  [words refilled at step 0, lanes ascending] [step 1] ... [step T-1]
The encoder starts every lane at x = L, so the decoder must end every lane at x = L having read
every word: `finish()` checks both (the decoder consumed exactly what the encoder wrote).
"""
from __future__ import annotations

import numpy as np

from .errors import CoderUnavailable, FormatError
from .probs import freqs_to_cdf

U64 = np.uint64
SCALAR_BELOW = 8      # decode steps with fewer lanes use Python integers (same result, less overhead)


def check_params(precision: int, prob_precision: int) -> None:
    if precision not in (32, 64):
        raise CoderUnavailable(f"entropy.precision must be 32 or 64, got {precision}")
    if not 10 <= prob_precision <= precision // 2:
        raise CoderUnavailable(f"entropy.prob_precision={prob_precision} must be in 10..{precision // 2} "
                               f"for entropy.precision={precision} (rANS needs prob_precision <= "
                               "precision/2)")


def _word_dtype(precision: int) -> str:
    return "<u2" if precision == 32 else "<u4"


def max_payload_bytes(symbols: int, lanes: int, precision: int, prob_precision: int) -> int:
    """Upper bound of one block's payload: at most one word per symbol plus the flush."""
    return (symbols + 2 * lanes) * (precision // 16)


def encode(starts: np.ndarray, freqs: np.ndarray, counts: np.ndarray, precision: int,
           prob_precision: int) -> bytes:
    """Encode one block. starts, freqs: (T, B) integer arrays; counts: (T,) active lanes per step."""
    check_params(precision, prob_precision)
    b, n = precision // 2, prob_precision
    mask_b = U64((1 << b) - 1)
    lanes = int(counts[0]) if len(counts) else 0
    x = np.full(lanes, 1 << b, dtype=U64)
    chunks = []
    for t in range(len(counts) - 1, -1, -1):
        k = int(counts[t])
        f = freqs[t, :k].astype(U64)
        xk = x[:k]
        over = xk >= (f << U64(precision - n))
        if over.any():
            chunks.append(xk[over] & mask_b)
            xk[over] >>= U64(b)
        x[:k] = ((xk // f) << U64(n)) + (xk % f) + starts[t, :k].astype(U64)
    flush = np.empty(2 * lanes, dtype=U64)
    flush[0::2] = x & mask_b
    flush[1::2] = x >> U64(b)
    chunks.append(flush)
    return np.concatenate(chunks[::-1]).astype(_word_dtype(precision)).tobytes()


class Decoder:
    """Decodes one block step by step: `decode(freqs)` per step, then `finish()`."""

    def __init__(self, payload: bytes, lanes: int, precision: int, prob_precision: int):
        check_params(precision, prob_precision)
        self.b, self.n, self.precision = precision // 2, prob_precision, precision
        wbytes = precision // 16
        if len(payload) % wbytes:
            raise FormatError(f"rANS block payload of {len(payload)} bytes is not a whole number of "
                              f"{wbytes}-byte words")
        self.words = np.frombuffer(payload, dtype=_word_dtype(precision)).astype(U64)
        if len(self.words) < 2 * lanes:
            raise FormatError(f"rANS block payload too short for the states of {lanes} streams")
        self.x = self.words[0:2 * lanes:2] | (self.words[1:2 * lanes:2] << U64(self.b))
        if lanes and int(self.x.min()) < (1 << self.b):
            raise FormatError("rANS block payload holds an impossible coder state")
        self.pos = 2 * lanes
        self.lanes = lanes

    def decode(self, freqs: np.ndarray) -> np.ndarray:
        """freqs: (k, 256) for lanes 0..k-1 -> (k,) uint8 symbols."""
        k = len(freqs)
        if k < SCALAR_BELOW:
            return self._decode_scalar(freqs)
        cdf = freqs_to_cdf(freqs)
        xk = self.x[:k]
        slot = (xk & U64((1 << self.n) - 1)).astype(np.int64)
        sym = (cdf[:, 1:] <= slot[:, None]).sum(axis=1)
        rows = np.arange(k)
        f = freqs[rows, sym].astype(U64)
        start = cdf[rows, sym]
        xk = f * (xk >> U64(self.n)) + (slot - start).astype(U64)
        low = xk < U64(1 << self.b)
        cnt = int(low.sum())
        if cnt:
            if self.pos + cnt > len(self.words):
                raise FormatError("rANS block payload ends before the block's last symbol")
            xk[low] = (xk[low] << U64(self.b)) | self.words[self.pos:self.pos + cnt]
            self.pos += cnt
        self.x[:k] = xk
        return sym.astype(np.uint8)

    def _decode_scalar(self, freqs: np.ndarray) -> np.ndarray:
        """The same arithmetic with Python integers: less overhead for a few lanes."""
        ends = np.cumsum(freqs, axis=1)
        out = np.empty(len(freqs), dtype=np.uint8)
        n, b, mask = self.n, self.b, (1 << self.n) - 1
        for i in range(len(freqs)):
            x = int(self.x[i])
            slot = x & mask
            sym = int(np.searchsorted(ends[i], slot, side="right"))
            f = int(freqs[i, sym])
            x = f * (x >> n) + slot - (int(ends[i, sym]) - f)
            if x < 1 << b:
                if self.pos >= len(self.words):
                    raise FormatError("rANS block payload ends before the block's last symbol")
                x = (x << b) | int(self.words[self.pos])
                self.pos += 1
            self.x[i] = x
            out[i] = sym
        return out

    def finish(self) -> None:
        """Raise unless every word was consumed and every lane is back at its initial state."""
        if self.pos != len(self.words):
            raise FormatError(f"rANS block payload has {len(self.words) - self.pos} unread words")
        if self.lanes and not (self.x == U64(1 << self.b)).all():
            raise FormatError("rANS block did not decode back to the initial coder state")


# ---------------------------------------------------------------------------------------------
# Reference: the same coder with Python integers, one lane at a time (obviously correct, slow).

def encode_ref(starts, freqs, counts, precision: int, prob_precision: int) -> bytes:
    b, n = precision // 2, prob_precision
    lanes = int(counts[0]) if len(counts) else 0
    x = [1 << b] * lanes
    steps = []
    for t in range(len(counts) - 1, -1, -1):
        out = []
        for i in range(int(counts[t])):
            f, s = int(freqs[t][i]), int(starts[t][i])
            if x[i] >= f << (precision - n):
                out.append(x[i] & ((1 << b) - 1))
                x[i] >>= b
            x[i] = ((x[i] // f) << n) + x[i] % f + s
        steps.append(out)
    words = [w for xi in x for w in (xi & ((1 << b) - 1), xi >> b)]
    for out in reversed(steps):
        words.extend(out)
    return np.array(words, dtype=_word_dtype(precision)).tobytes()


def decode_ref(payload: bytes, freq_rows, counts, precision: int, prob_precision: int) -> list:
    """Decode a whole block given every step's (k_t, 256) frequency rows (for tests)."""
    b, n = precision // 2, prob_precision
    words = [int(w) for w in np.frombuffer(payload, dtype=_word_dtype(precision))]
    lanes = int(counts[0]) if len(counts) else 0
    x = [words[2 * i] | words[2 * i + 1] << b for i in range(lanes)]
    pos, out = 2 * lanes, []
    for t, k in enumerate(counts):
        row = []
        for i in range(int(k)):
            fr = [int(v) for v in freq_rows[t][i]]
            slot, acc, sym = x[i] & ((1 << n) - 1), 0, 0
            while acc + fr[sym] <= slot:
                acc += fr[sym]
                sym += 1
            x[i] = fr[sym] * (x[i] >> n) + slot - acc
            if x[i] < 1 << b:
                x[i] = x[i] << b | words[pos]
                pos += 1
            row.append(sym)
        out.append(row)
    assert pos == len(words) and all(v == 1 << b for v in x)
    return out
