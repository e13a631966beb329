"""Table ANS (tANS, the FSE construction) over B lanes, with a new table for every distribution.

Glossary: R = prob_precision (table log), L = 2**R table states, states X in [L, 2L);
f, c = frequency and cumulative start of a byte (frequencies sum to L, as for rANS).

Table for a distribution (exactly what FSE builds): the j-th "occurrence" (0 <= j < L; byte s
owns occurrences c..c+f-1) is placed at slot P(j) = j * STEP mod L, STEP = L/2 + L/8 + 3 (odd, so
P is a permutation). Decoding state L + i: byte s owns the occurrence P^-1(i); x = f + (number of
s's slots below i); read nb = R + 1 - bitlen(x) bits: X = x << nb | bits. Encoding is the inverse:
emit the low nb bits of X so that x = X >> nb lies in [f, 2f), then go to the (x - f)-th smallest
slot of s.

Rebuilding an L-entry table per byte would cost O(L) per symbol. Instead one count table
G[h, i] = #{j < h : P(j) < i} (fixed for a given R) answers "rank of slot i within byte s" as
G[c+f, i] - G[c, i] in O(1), and the encoder finds the (x-f)-th slot by binary search in O(R).
The bit stream is identical to one coded with explicitly built tables (`encode_ref` below builds
them; a test checks they agree). G has (L+1)**2 uint16 entries: 32 MiB at R = 12, which is why
prob_precision is capped at TANS_MAX_PRECISION.

Block payload (bits, most significant first, zero-padded to a byte): R bits of final state per
lane 0..k_0-1, then the bits read at step 0 (lanes ascending), step 1, ...; `finish()` checks that
every bit was read, the padding is zero and every lane is back at state L.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from .errors import CoderUnavailable, FormatError
from .probs import freqs_to_cdf

TANS_MIN_PRECISION, TANS_MAX_PRECISION = 10, 12
SCALAR_BELOW = 16      # blocks with fewer lanes are encoded with Python integers (same bits, faster)
DECODE_SCALAR_BELOW = 8


def check_params(prob_precision: int) -> None:
    if not TANS_MIN_PRECISION <= prob_precision <= TANS_MAX_PRECISION:
        raise CoderUnavailable(
            f"entropy.coder=tans supports entropy.prob_precision {TANS_MIN_PRECISION}.."
            f"{TANS_MAX_PRECISION} only (got {prob_precision}): table ANS needs a 2**prob_precision-"
            f"state table per byte, and its rank table grows as 4**prob_precision (32 MiB at "
            f"{TANS_MAX_PRECISION}); use entropy.coder=rans or lower entropy.prob_precision")


def spread_step(table_log: int) -> int:
    size = 1 << table_log
    return (size >> 1) + (size >> 3) + 3


@lru_cache(maxsize=4)
def rank_table(table_log: int) -> np.ndarray:
    """G as a flat uint16 array: G[h * (L + 1) + i] = #{j < h : (j * STEP mod L) < i}."""
    size = 1 << table_log
    slots = (np.arange(size, dtype=np.int64) * spread_step(table_log)) & (size - 1)
    g = np.zeros((size + 1, size + 1), dtype=np.uint16)
    np.cumsum(slots[:, None] < np.arange(size + 1)[None, :], axis=0, dtype=np.uint16, out=g[1:])
    g.flags.writeable = False
    return g.reshape(-1)


def max_payload_bytes(symbols: int, lanes: int, prob_precision: int) -> int:
    return ((symbols + lanes) * prob_precision + 7) // 8


def _bitlen(v: np.ndarray) -> np.ndarray:
    """Bit length of positive int64 values below 2**53 (exact through float64 frexp)."""
    return np.frexp(v.astype(np.float64))[1].astype(np.int64)


def _pack_bits(values: np.ndarray, nbits: np.ndarray, width: int) -> bytes:
    """Concatenate the low nbits[p] bits of values[p], most significant first, zero-pad to bytes."""
    shifts = np.arange(width - 1, -1, -1, dtype=np.int64)
    bits = ((values[:, None] >> shifts[None, :]) & 1).astype(np.uint8)
    keep = shifts[None, :] < nbits[:, None]
    return np.packbits(bits[keep]).tobytes()


def encode(starts: np.ndarray, freqs: np.ndarray, counts: np.ndarray, prob_precision: int) -> bytes:
    """Encode one block. starts, freqs: (T, B); counts: (T,) active lanes per step (a prefix)."""
    check_params(prob_precision)
    if len(counts) and counts[0] < SCALAR_BELOW:
        return _encode_scalar(starts, freqs, counts, prob_precision)
    r = prob_precision
    size = 1 << r
    g = rank_table(r)
    row = size + 1
    lanes = int(counts[0]) if len(counts) else 0
    x = np.full(lanes, size, dtype=np.int64)
    vals, nbs = [], []
    for t in range(len(counts) - 1, -1, -1):
        k = int(counts[t])
        f = freqs[t, :k].astype(np.int64)
        c = starts[t, :k].astype(np.int64)
        xk = x[:k]
        nb = r + 1 - _bitlen(f)
        nb -= (xk >> nb) < f
        vals.append(xk & ((1 << nb) - 1))
        nbs.append(nb)
        rank = (xk >> nb) - f
        lo_row, hi_row = c * row, (c + f) * row
        lo, hi = np.zeros(k, dtype=np.int64), np.full(k, size - 1, dtype=np.int64)
        for _ in range(r):                      # smallest slot i with rank(<= i) > rank
            mid = (lo + hi) >> 1
            below = g[hi_row + mid + 1].astype(np.int64) - g[lo_row + mid + 1]
            go_left = below > rank
            hi = np.where(go_left, mid, hi)
            lo = np.where(go_left, lo, mid + 1)
        x[:k] = size + lo
    vals.append(x - size)
    nbs.append(np.full(lanes, r, dtype=np.int64))
    if not lanes:
        return b""
    return _pack_bits(np.concatenate(vals[::-1]), np.concatenate(nbs[::-1]), r)


def _encode_scalar(starts, freqs, counts, r: int) -> bytes:
    """`encode` with Python integers, one lane at a time: the same bits, less overhead for few lanes."""
    size, row = 1 << r, (1 << r) + 1
    g = memoryview(rank_table(r))
    starts, freqs = starts.tolist(), freqs.tolist()
    lanes = int(counts[0])
    x = [size] * lanes
    vals, nbs = [], []
    for t in range(len(counts) - 1, -1, -1):
        for i in range(int(counts[t]) - 1, -1, -1):     # reversed: flipped back below
            f, c, xi = freqs[t][i], starts[t][i], x[i]
            nb = r + 1 - f.bit_length()
            if (xi >> nb) < f:
                nb -= 1
            vals.append(xi & ((1 << nb) - 1))
            nbs.append(nb)
            rank, lo_row, hi_row = (xi >> nb) - f, c * row, (c + f) * row
            lo, hi = 0, size - 1
            while lo < hi:
                mid = (lo + hi) >> 1
                if g[hi_row + mid + 1] - g[lo_row + mid + 1] > rank:
                    hi = mid
                else:
                    lo = mid + 1
            x[i] = size + lo
    for i in range(lanes - 1, -1, -1):
        vals.append(x[i] - size)
        nbs.append(r)
    return _pack_bits(np.array(vals[::-1], dtype=np.int64), np.array(nbs[::-1], dtype=np.int64), r)


class Decoder:
    """Decodes one block step by step: `decode(freqs)` per step, then `finish()`."""

    def __init__(self, payload: bytes, lanes: int, prob_precision: int):
        check_params(prob_precision)
        self.r, self.size = prob_precision, 1 << prob_precision
        self.g = rank_table(prob_precision)
        self.inv_step = pow(spread_step(prob_precision), -1, self.size)
        buf = np.frombuffer(bytes(payload) + b"\0\0\0\0", dtype=np.uint8).astype(np.uint64)
        self.windows = (buf[:-3] << np.uint64(24)) | (buf[1:-2] << np.uint64(16)) \
            | (buf[2:-1] << np.uint64(8)) | buf[3:]            # big-endian 32-bit window per byte
        self.nbytes, self.total_bits, self.pos = len(payload), 8 * len(payload), 0
        self.lanes = lanes
        self.x = self.size + self._read(np.full(lanes, self.r, dtype=np.int64))

    def _read(self, nb: np.ndarray) -> np.ndarray:
        offs = self.pos + np.cumsum(nb) - nb
        end = self.pos + int(nb.sum())
        if end > self.total_bits:
            raise FormatError("tANS block payload ends before the block's last symbol")
        self.pos = end
        w = self.windows[offs >> 3] << (offs & 7).astype(np.uint64)
        return ((w & np.uint64(0xFFFFFFFF)) >> (32 - nb).astype(np.uint64)).astype(np.int64)

    def decode(self, freqs: np.ndarray) -> np.ndarray:
        """freqs: (k, 256) for lanes 0..k-1 -> (k,) uint8 symbols."""
        k = len(freqs)
        if k < DECODE_SCALAR_BELOW:
            return self._decode_scalar(freqs)
        cdf = freqs_to_cdf(freqs)
        i = self.x[:k] - self.size
        j = (i * self.inv_step) & (self.size - 1)
        sym = (cdf[:, 1:] <= j[:, None]).sum(axis=1)
        rows = np.arange(k)
        c, f = cdf[rows, sym], freqs[rows, sym].astype(np.int64)
        row = self.size + 1
        xs = f + (self.g[(c + f) * row + i].astype(np.int64) - self.g[c * row + i])
        nb = self.r + 1 - _bitlen(xs)
        self.x[:k] = (xs << nb) | self._read(nb)
        return sym.astype(np.uint8)

    def _decode_scalar(self, freqs: np.ndarray) -> np.ndarray:
        """The same arithmetic with Python integers: less overhead for a few lanes."""
        ends = np.cumsum(freqs, axis=1)
        out = np.empty(len(freqs), dtype=np.uint8)
        size, r, row = self.size, self.r, self.size + 1
        for lane in range(len(freqs)):
            i = int(self.x[lane]) - size
            sym = int(np.searchsorted(ends[lane], (i * self.inv_step) & (size - 1), side="right"))
            f = int(freqs[lane, sym])
            c = int(ends[lane, sym]) - f
            xs = f + int(self.g[(c + f) * row + i]) - int(self.g[c * row + i])
            nb = r + 1 - xs.bit_length()
            if self.pos + nb > self.total_bits:
                raise FormatError("tANS block payload ends before the block's last symbol")
            w = (int(self.windows[self.pos >> 3]) << (self.pos & 7)) & 0xFFFFFFFF
            self.pos += nb
            self.x[lane] = (xs << nb) | (w >> (32 - nb))
            out[lane] = sym
        return out

    def finish(self) -> None:
        if (self.pos + 7) // 8 != self.nbytes:
            raise FormatError(f"tANS block payload has {self.nbytes - (self.pos + 7) // 8} unread bytes")
        pad = self.pos % 8
        if pad and int(self.windows[self.pos >> 3] >> np.uint64(24)) & ((1 << (8 - pad)) - 1):
            raise FormatError("tANS block payload has non-zero padding bits")
        if self.lanes and not (self.x == self.size).all():
            raise FormatError("tANS block did not decode back to the initial coder state")


# ---------------------------------------------------------------------------------------------
# Reference: build the FSE tables explicitly for every distribution (slow, obviously correct).

def build_tables(freq_row, table_log: int):
    """-> (symbol_of_slot, slots_of_symbol): the spread, and each byte's slots in ascending order."""
    size, step = 1 << table_log, spread_step(table_log)
    symbol_of_slot = [0] * size
    occurrence = 0
    for s, f in enumerate(freq_row):
        for _ in range(int(f)):
            symbol_of_slot[(occurrence * step) % size] = s
            occurrence += 1
    assert occurrence == size
    slots_of_symbol = [[] for _ in freq_row]
    for i, s in enumerate(symbol_of_slot):
        slots_of_symbol[s].append(i)
    return symbol_of_slot, slots_of_symbol


def encode_ref(freq_rows, symbols, counts, table_log: int) -> bytes:
    """freq_rows[t][i]: the 256 frequencies of lane i at step t; symbols[t][i]: its byte."""
    size = 1 << table_log
    lanes = int(counts[0]) if len(counts) else 0
    x = [size] * lanes
    chunks = []
    for t in range(len(counts) - 1, -1, -1):
        chunk = []
        for i in range(int(counts[t])):
            s = int(symbols[t][i])
            f = int(freq_rows[t][i][s])
            nb = 0
            while (x[i] >> nb) >= 2 * f:
                nb += 1
            chunk.append((x[i] & ((1 << nb) - 1), nb))
            x[i] = size + build_tables(freq_rows[t][i], table_log)[1][s][(x[i] >> nb) - f]
        chunks.append(chunk)
    bits = "".join(format(xi - size, f"0{table_log}b") for xi in x)
    for chunk in reversed(chunks):
        bits += "".join(format(v, f"0{nb}b") if nb else "" for v, nb in chunk)
    bits += "0" * (-len(bits) % 8)
    return bytes(int(bits[p:p + 8], 2) for p in range(0, len(bits), 8))
