"""The context-mixing stage (coder "cm"): the network's byte distribution becomes one input among
several predictors, mixed bit by bit and coded by a binary arithmetic coder (the lpaq design).

Each byte is coded as 8 binary decisions, most significant bit first. For the decision at node
c0 (the bits seen so far behind a leading 1) of stream s:

    inputs  x_0  stretch(P_nn(bit=1 | c0)): the network's byte frequencies summed over the bytes
                 that share the prefix (0 when there is no network: the `cm` profile)
            x_1..x_7  stretch(p) of adaptive bit counters in one shared hash table, for the
                 contexts order 0, 1, 2, 3, 4, 6 (that many previous bytes of the stream) and the
                 current word (letters, case folded), each hashed with c0
            x_8..x_14  the same counters through a learned map (count 0..15, p in 64 steps) ->
                 p: what such a counter is really worth (young counters overstate)
            x_15, x_16  (version 2) the match model, while the byte it predicts agrees with c0:
                 stretch(p) of a counter for (length bucket, predicted bit), and
                 +-min(length, 32) * 32 (0, 0 without a match)
            last  a bias (256)
    mixers  two: d_m = sum w_i x_i >> 16 with the weight set chosen by how many of orders 2..6
            have been seen (v2: times 4 match-length buckets; mixer 1) and by c0 (mixer 2);
            p_mix = squash((d_1 + d_2) / 2); after the bit each learns from its own error,
            w_i += x_i * ((bit << 12) - squash(d_m)) * LR >> LR_SHIFT (online logistic regression)
    SSE     an APM on (previous byte, c0) refines p_mix: p = (p_mix + 3 p_apm) / 4
    coder   a carry-less 32-bit binary arithmetic coder per stream, p in 12 bits

Version 2 also gives each counter slot an 8-bit check (two slots per context hash; a stranger
takes over the younger one, reset) and keeps every stream's history for the match model: a hash
of the last MINLEN bytes -> the position that followed them last (any stream), verified
backwards, then followed while it predicts right. Version 1 (neither) still decodes.
Version 3 is version 2 primed (`prime`): before the first byte, the tables, mixers and APM have
learned a text stored with the model (its primer), coded as one stream without the network, and
the match model can point into that text (a region after the streams' histories).
Version 4 (5 is version 4 primed; what the cm profile wrote) adds a bit history to every counter slot
(its last outcomes, up to 7) read through a learned map per context (one more input each), three
contexts (word pair, bytes 2-3 back, column with indent), without a network mixers chosen by
byte classes (three, averaged), and a second APM on the last two bytes (docs/codec.md).
Version 6 (what files with a network get; 7 is version 6 primed; not the cm profile)
adds five stream-local contexts (orders 0-3 and the word hashed again with the stream's index:
the shared ones see every stream's bytes interleaved) and keeps the network out of the three
mixers, so they mix the context models as without one; two final mixers (weight sets by mixer
1's set and by c0) weigh the three mixers' outputs against the network's input and a bias:
p_mix = squash((f_1 + f_2) / 2) (docs/codec.md: -7% primed on Python source).
Versions 8 and 9 (what primed files got next) are versions 7 and 5 with 2^24 counter slots instead
of 2^22: a primer's text no longer fills the table before the file starts (1-2% smaller).
Version 10 (what the cm profile writes; 11 is version 10 primed, with 2^24 slots) is version 4
with version 6's two final mixers over its three mixers (their network input is 0): learned
weights instead of the fixed average (0.5-1.3% smaller without a primer, 0.2-0.6% with one).
Version 12 is version 11 with four more contexts: the previous word with the last byte, and
with the last two bytes, the word before the previous one with the current word (a fourth word
slot per stream), order 5 (docs/codec.md: -0.55% on prose, -0.78% on Python source primed with
2 MB; without a primer they learn too slowly to pay).
Version 13 (what the cm profile writes primed since) is version 12 with 2^25 slots: its 14
contexts fill 2^24 from a 2 MB primer (-0.37% on prose and Python source primed with 2 MB).
Version 14 (what files with a network get primed since) is version 8 with version 12's four
contexts (before the five stream-local ones: 19 contexts) and version 13's 2^25 slots
(docs/codec.md: -0.6% on prose, -0.8% on Python source primed with 2 MB, balanced and fast).
Version 15 (what the cm profile writes, unprimed, for a frame it codes smaller: binary data) is
version 10 with four contexts for binary data: byte 2 back alone, bytes 3-4 back, bytes 4 and 8
back, bytes 1 and 3 back (docs/codec.md: 3-8% smaller on executables and databases). Version 16
(for a frame of fixed-size records) is version 15 with two contexts for records of r bytes, r
the frame's (its header names it): the bytes one and two records back, and the byte one record
back with the last one (docs/codec.md: 4-20% smaller than version 15 on tables and databases).

Counters: 22-bit probability + 10-bit count in one uint32; p += (bit - p) * 2 / (2n + 3), n
capped at LIMIT (faster adaptation while young, then a slow average). Every number is an integer
and every operation is defined on integers (>> floors, as Python's and C's arithmetic shifts on
int64 do), so encoder and decoder, in Python or C, compute the same bits. The tables are shared
by all streams (a stream that starts cold is helped by what the others saw) and updated in a
fixed order: steps in turn, streams 0..k-1 within a step, bits 7..0 within a byte.

`Reference` below is the plain implementation the compiled `_cm` (from _cm.c) must equal
(tests/umoec/codec/test_cm.py); `_run` uses the compiled one when pip built it. One coder per
block codes every stream's decisions in that order; its payload is the coder's bytes.
"""
from __future__ import annotations

import hashlib
import os
import threading

import numpy as np

from .errors import FormatError

VERSION = 6                     # what new files with a network get; every version here decodes
VERSIONS = (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16)
PRIMED = 14                     # ... of a model with a primer: version 6 primed, version 12's
# contexts, 2^25 slots
VERSION_ALONE, PRIMED_ALONE = 10, 13  # without a network (the cm profile): version 4 with final
# mixers; primed: version 10 primed, four more contexts, 2^25 slots
BASE = {3: 2, 5: 4, 7: 6, 8: 6, 9: 4, 11: 10, 12: 10, 13: 10, 14: 6}   # primed version -> the stage
BINARY = 15                     # the cm profile's other unprimed version: 10 with binary contexts
RECORD = 16                     # ... and 15 with two more for records of a given length
MAX_RECORD = 4096               # (2..MAX_RECORD bytes, the frame's header names it)
BIG_TABLE = (8, 9, 11, 12)      # the versions with 2^24 slots
HUGE_TABLE = (13, 14)           # ... with 2^25 (14-19 contexts fill 2^24 from 2 MB)
WORDS4 = (12, 13, 14)           # the versions with version 12's contexts and four word slots
TABLE_BITS = 22                 # 4 M counter slots, shared by all streams and contexts
BIG_TABLE_BITS = 24             # versions 8, 9, 11, 12: 16 M (a primer's text fills a smaller table)
HUGE_TABLE_BITS = 25            # versions 13, 14: 32 M, 256 MB
ORDERS = (1, 2, 3, 4, 6)
NCTX = 7                        # order 0, orders 1..6, word
NCTX4 = 10                      # version 4: and word pair, bytes 2-3 back, column
LOCAL = (0, 1, 2, 3, 6)         # version 6: orders 0-3 and the word again, keyed by stream
NCTX6 = NCTX4 + len(LOCAL)
NCTX12 = NCTX4 + 4              # version 12: and the previous words' four (context_hashes12)
NCTX16 = NCTX12 + 2             # version 16: version 15's and two for records (context_hashes16)
NCTX14 = NCTX12 + len(LOCAL)    # version 14: version 12's, then version 6's stream-local
SM_ROWS = 1024                  # per context: (count 0..15, probability / 64) -> probability
SM_RATE = 6
LR, LR_SHIFT = 1, 12            # mixer learning rate: w += x * err * LR >> LR_SHIFT
LIMIT = 60                      # counter count cap
W_MAX = 1 << 24                 # mixer weights stay within +-256.0
W_NN, W_CTX = 1 << 16, 1 << 12  # initial weights: the network 1.0, each context input 1/16
APM_ROWS = 1 << 16              # (previous byte, c0)
MINLEN, MT_BITS, MAXLEN, CHECKLEN = 6, 20, 65535, 32    # the match model (version 2)


ICM_RATE = 7                    # version 4: bit history -> probability maps learn at 1/128
SETS2_4, SETS3_4 = 256 * 64, 256 * 16   # version 4 without a network: mixer 2 and mixer 3's
# weight sets (by c0 and byte classes; with a network they learn too slowly to weigh it)
NF, FSETS = 5, 20 + 256         # version 6's final mixers: inputs (mixers 1-3, the network, a
FLR = 2                         # bias), weight sets (mixer 1's, c0's), learning rate
FW_MIX, FW_NN = 21845, 32768    # their initial weights: each mixer 1/3, the network 1/2


def written(network: bool, primed: bool, binary: bool = False, record: int = 0) -> int:
    """The version a new file gets: 6 with a network (14 primed), 10 without (13 primed; 15 for
    a frame of binary data, `binary`; 16 for one of records of `record` bytes)."""
    if network:
        return PRIMED if primed else VERSION
    if primed:
        return PRIMED_ALONE
    return RECORD if record else (BINARY if binary else VERSION_ALONE)


def base(version: int) -> int:
    """The stage a version runs (a primed version runs the one it primes, 15 and 16 run 10)."""
    return 10 if version in (BINARY, RECORD) else BASE.get(version, version)


def is_primed(version: int) -> bool:
    return version in BASE


def table_bits(version: int) -> int:
    """log2 of the slot table's slots: 2^24 for the primed versions 8, 9, 11, 12, 2^25 for 13
    and 14, else 2^22."""
    if version in HUGE_TABLE:
        return HUGE_TABLE_BITS
    return BIG_TABLE_BITS if version in BIG_TABLE else TABLE_BITS


def final_mixers(version: int, use_nn: bool) -> bool:
    """Two final mixers weigh the context mixers' outputs (and the network's input): version 6
    with a network, version 10 always."""
    return (base(version) == 6 and use_nn) or base(version) == 10


def nctx(version: int) -> int:
    if base(version) == 6:
        return NCTX14 if version in WORDS4 else NCTX6
    if version == RECORD:
        return NCTX16
    if version in WORDS4 or version == BINARY:
        return NCTX12
    return NCTX4 if base(version) >= 4 else NCTX


def word_slots(version: int) -> int:
    """Per stream: its word (v4: and the previous word, its line state; v12: and the word before
    the previous one)."""
    return 4 if version in WORDS4 else (3 if base(version) >= 4 else 1)


def nin(version: int) -> int:
    """Mixer inputs: the network, each context's counter and mapped counter, (v4) its bit
    history's map, (v2) the match model's two, the bias."""
    if base(version) >= 4:
        return 4 + 3 * nctx(version)
    return 2 + 2 * NCTX + (2 if version >= 2 else 0)


def nsets(version: int) -> int:
    """Weight sets of all mixers: mixer 1's, mixer 2's (256 by c0; v4: times 64 classes of
    the last two bytes), (v4) mixer 3's."""
    return sets1(version) + (SETS2_4 + SETS3_4 if base(version) >= 4 else 256)


def sets1(version: int) -> int:
    """Mixer 1's weight sets (how many of orders 2..6 were seen; v2: times 4 match lengths);
    mixer 2's 256 (by c0) follow."""
    return 20 if version >= 2 else 6


M32 = 0xFFFFFFFF
M64 = (1 << 64) - 1
MAX_BYTES_PER_BYTE = 12         # p >= 1/4096: at most 12 bits per decision, 8 decisions

_SQ = (1, 2, 3, 6, 10, 16, 27, 45, 73, 120, 194, 310, 488, 747, 1101, 1546, 2047, 2549, 2994,
       3348, 3607, 3785, 3901, 3975, 4022, 4050, 4068, 4079, 4085, 4089, 4092, 4093, 4094)


def squash(d: int) -> int:
    """4096 / (1 + e^-d/256), interpolated from 33 points: stretch domain -> 12-bit probability."""
    if d > 2047:
        return 4095
    if d < -2047:
        return 1
    w = d & 127
    i = (d >> 7) + 16
    return (_SQ[i] * (128 - w) + _SQ[i + 1] * w + 64) >> 7


def _stretch_table() -> list[int]:
    out, pi = [0] * 4096, 0
    for x in range(-2047, 2048):
        v = squash(x)
        for i in range(pi, v + 1):
            out[i] = x
        pi = v + 1
    for i in range(pi, 4096):
        out[i] = 2047
    return out


STRETCH = _stretch_table()
DT = [131072 // (2 * n + 3) for n in range(1024)]


def mix32(x: int) -> int:
    """A 32-bit integer hash (lowbias32)."""
    x ^= x >> 16
    x = (x * 0x7FEB352D) & M32
    x ^= x >> 15
    x = (x * 0x846CA68B) & M32
    return x ^ (x >> 16)


def context_hashes(hist: int, word: int) -> list[int]:
    """The 7 context hashes of a stream at a byte boundary: order 0, orders ORDERS, word."""
    out = [mix32(0x3C6EF372)]
    for o in ORDERS:
        v = hist & ((1 << (8 * o)) - 1)
        out.append(mix32((mix32(v & M32) + (v >> 32) * 0x9E3779B1 + o * 0x85EBCA6B) & M32))
    out.append(mix32((word + 0x6A09E667) & M32))
    return out


def context_hashes4(hist: int, word: int, prev: int, line: int) -> list[int]:
    """Version 4's three more: the word with the previous one, bytes 2 and 3 back (skipping the
    last), the column (up to 40) with the line's indent and the last byte."""
    col, ind = line & 0xFFFF, (line >> 16) & 255
    return [mix32((word * 0x2F0B3A49 + prev + 0x01234567) & M32),
            mix32((((hist >> 8) & 0xFFFF) + 0x0ABCDEF1) & M32),
            mix32((min(col, 40) * 256 + (hist & 255) + ind * 0x10000 + 0x07777777) & M32)]


def context_hashes12(hist: int, word: int, prev: int, before: int) -> list[int]:
    """Version 12's four after version 4's ten: the previous word with the last byte and with the
    last two, the word before the previous one with the current word, order 5."""
    return [mix32((prev * 0x2F0B3A49 + (hist & 255) + 0x0ABCDEF1) & M32),
            mix32((prev * 0x2F0B3A49 + (hist & 0xFFFF) * 0x85EBCA6B + 0x2718281) & M32),
            mix32((before * 0x2F0B3A49 + word * 0x85EBCA6B + 0x1234321) & M32),
            mix32(((hist & M32) * 0x9E3779B1 + ((hist >> 32) & 255) * 0x85EBCA6B + 0x1414213) & M32)]


def context_hashes15(hist: int) -> list[int]:
    """Version 15's four after version 4's ten, for binary data: byte 2 back alone, bytes 3 and
    4 back, bytes 4 and 8 back (fields of 4-byte records), bytes 1 and 3 back."""
    return [mix32((((hist >> 8) & 255) + 0x0ABCDEF1) & M32),
            mix32((((hist >> 16) & 0xFFFF) * 0x85EBCA6B + 0x2718281) & M32),
            mix32((((hist >> 24) & 255) + ((hist >> 56) & 255) * 256 + 0x1234321) & M32),
            mix32(((hist & 255) + ((hist >> 16) & 255) * 256 + 0x1414213) & M32)]


def context_hashes16(hist: int, past, tg: int, rec: int) -> list[int]:
    """Version 16's six after version 4's ten, for records of `rec` bytes: version 15's four,
    the bytes one and two records back (the same field of the two records before), the byte one
    record back with the last one. past[i]: the stream's i-th byte, `tg` of them coded."""
    a = int(past[tg - rec]) if tg >= rec else 0
    a2 = int(past[tg - 2 * rec]) if tg >= 2 * rec else 0
    return context_hashes15(hist) + [mix32((a + a2 * 256 + 0x5151515) & M32),
                                         mix32((a + (hist & 255) * 256 + 0x6161616) & M32)]


def local_hash(h: int, stream: int) -> int:
    """Version 6: a context hash again, keyed by the stream's index (a stream-local context)."""
    return mix32((h + stream * 0x5851F42D + 0x4D) & M32)


def byte_class(c: int) -> int:
    """8 classes: lower, upper, space, digit, newline, brackets, . , : ; and the rest."""
    if 97 <= c <= 122:
        return 0
    if 65 <= c <= 90:
        return 1
    if c in (32, 10):
        return 2 if c == 32 else 4
    if 48 <= c <= 57:
        return 3
    if c in b"()[]{}":
        return 5
    return 6 if c in b".,:;" else 7


def history_update(h: int, bit: int) -> int:
    """A slot's bit history (v4): its last bits (up to 7) behind a leading 1; 0 = none."""
    h = 2 | bit if h == 0 else (h << 1) | bit
    return (h & 127) | 128 if h >= 256 else h


def line_update(ls: int, byte: int) -> int:
    """A stream's line state (v4): column (16 bits, saturating), the indent (spaces that start
    the line, 8 bits, saturating), whether only spaces were seen on the line yet."""
    if byte == 10:
        return 1 << 24
    col, ind, start = ls & 0xFFFF, (ls >> 16) & 255, (ls >> 24) & 1
    col = min(col + 1, 0xFFFF)
    if start and byte == 32:
        ind = min(ind + 1, 255)
    else:
        start = 0
    return col | (ind << 16) | (start << 24)


def apm2_row(hist: int, c0: int) -> int:
    """Version 4's second APM: a hash of the last two bytes, with c0."""
    return ((mix32(((hist & 0xFFFF) * 0x9E3779B1 + 0x0051ED27) & M32) >> 16) ^ (c0 * 0x9E37)) & 0xFFFF


def next_word(word: int, byte: int) -> int:
    if 65 <= byte <= 90:
        byte += 32
    if 97 <= byte <= 122:
        return ((word + byte) * 0x2F0B3A49) & M32
    return 0


def nn_bit_probability(cum, c0: int, depth: int) -> int:
    """P(next bit = 1 | the byte starts with c0's bits) in 12 bits, from cumulative frequencies
    (257 entries): the frequencies of the bytes under each half of the node, integer division."""
    prefix = c0 - (1 << depth)
    lo = prefix << (8 - depth)
    mid = lo + (1 << (7 - depth))
    hi = lo + (1 << (8 - depth))
    total = int(cum[hi]) - int(cum[lo])
    ones = int(cum[hi]) - int(cum[mid])
    p = (ones * 4096 + total // 2) // total
    return min(4095, max(1, p))


def _apm_row() -> np.ndarray:
    return np.array([squash((j - 16) * 128) * 16 for j in range(33)], dtype=np.int32)


def _weights_init(version: int) -> np.ndarray:
    n = nin(version)
    w = np.full((nsets(version), n), W_CTX, dtype=np.int32)
    w[:, 0] = W_NN
    w[:, n - 3 if base(version) >= 4 else 1 + 2 * NCTX:] = 0    # the match model's inputs
    if base(version) not in (6, 10):                                # and the bias: unweighted
        return w.reshape(-1)
    fw = np.zeros((FSETS, NF), dtype=np.int32)                      # v6, v10: the final mixers'
    fw[:, :3], fw[:, 3] = FW_MIX, FW_NN
    return np.concatenate([w.reshape(-1), fw.reshape(-1)])


def _sm_row() -> np.ndarray:
    """A context's map (count 0..15, probability in 64 steps) -> 16-bit probability, starting
    at the probability itself."""
    return np.array([((q * 64 + 32) << 4) for _ in range(16) for q in range(64)], dtype=np.int32)


def _tables_init(version: int) -> np.ndarray:
    """The int32 tables after the counters: the APM, the counters' maps, (v4) the bit
    histories' maps (starting at 1/2) and the second APM. Filled in place: no temporary copies,
    so a decoder's peak memory is the tables themselves."""
    v4 = base(version) >= 4
    napm, nsm = APM_ROWS * 33, nctx(version) * SM_ROWS
    nh = nctx(version) * 256 if v4 else 0
    out = np.empty(napm * (2 if v4 else 1) + nsm + nh, dtype=np.int32)
    out[:napm].reshape(APM_ROWS, 33)[:] = _apm_row()
    out[napm:napm + nsm].reshape(-1, SM_ROWS)[:] = _sm_row()
    if v4:
        out[napm + nsm:napm + nsm + nh] = 1 << 15
        out[napm + nsm + nh:] = out[:napm]
    return out


def _slots_init(bits: int) -> np.ndarray:
    """The slot table: a row of four u32 per pair of slots (i, i ^ 1), where a context's hash
    may land: their counters (starting at 1/2, seen 0 times), then their check bytes and bit
    histories (bytes 8-11), then 4 unused bytes. Both slots in one cache line: one load per
    context per bit, where separate tables took three (the compiled loop is memory-bound).
    Made by repeating one row (a copy per row): writing the counters' two columns into zeros
    took 0.4-0.65 s for the 256 MB table of versions 13 and 14, this ~0.04 s."""
    return np.tile(np.array([1 << 31, 1 << 31, 0, 0], dtype=np.uint32), (1 << (bits - 1), 1))


class _Pairs:
    """Slot i of a (pairs, 2) view of the slot table: the reference reads and writes one value
    at a time."""

    def __init__(self, view: np.ndarray):
        self.view = view

    def __getitem__(self, i: int):
        return self.view[i >> 1, i & 1]

    def __setitem__(self, i: int, value) -> None:
        self.view[i >> 1, i & 1] = value


class CMState:
    """Everything the mixing stage learns while coding; encoder and decoder each hold one and
    step it identically. Tables are shared by the `streams` streams; `steps` bounds the steps
    coded with it (the match model keeps every stream's history); `primer` bytes (version 3)
    are the match model's region after those histories, filled by `prime`."""

    def __init__(self, streams: int, use_nn: bool, steps: int = 0, version: int = VERSION,
                 primer: int = 0, record: int = 0):
        if version not in VERSIONS:
            raise FormatError(f"mixing stage version {version} is unknown to this build")
        if primer and not is_primed(version):
            raise ValueError(f"a primer needs a primed mixing stage version ({PRIMED})")
        if (version == RECORD) != (2 <= record <= MAX_RECORD):
            raise ValueError(f"version {version} with records of {record} bytes (version {RECORD} "
                             f"takes 2 to {MAX_RECORD}, the others none)")
        self.use_nn, self.version, self.record = bool(use_nn), version, int(record)
        self.primer = int(primer)
        self.slots = _slots_init(table_bits(version))
        self.w = _weights_init(version)
        self.apm = _tables_init(version)
        self.streams = int(streams)     # a block codes every stream's lane (BlockEncoder)
        self.hist = np.zeros(streams, dtype=np.uint64)
        self.word = np.zeros(word_slots(version) * streams, dtype=np.uint32)
        self.history = max(1, int(steps))
        self.match = None
        if version >= 2:
            # history, positions, pointers and lengths, the length counters
            self.match = (np.zeros(streams * self.history + self.primer, dtype=np.uint8),
                          np.zeros(1 << MT_BITS, dtype=np.int64),              # hash -> position
                          np.zeros(2 * streams + 1, dtype=np.int64),           # pointers, lengths, step
                          np.full(64, 1 << 31, dtype=np.uint32))               # (length, bit) -> p

    def arrays(self):
        return (self.slots, self.w, self.apm, self.hist, self.word) + (self.match or ())

    def columns(self):
        """The slot table as the reference reads it: slot i's counter, check byte (v2) and bit
        history (v4), each indexed by i."""
        b = self.slots.view(np.uint8).reshape(-1, 16)
        v2, v4 = self.version >= 2, base(self.version) >= 4
        return (_Pairs(self.slots[:, :2]), _Pairs(b[:, 8:10]) if v2 else None,
                _Pairs(b[:, 10:12]) if v4 else None)


def len_bucket(n: int) -> int:
    return n if n < 16 else (12 + (n >> 2) if n < 72 else 31)


def counter_update(e: int, bit: int, limit: int) -> int:
    n, q = e & 1023, e >> 10
    q += (((bit << 22) - q) * DT[n]) >> 16
    return (q << 10) | (n + 1 if n < limit else n)


def match_hash(hist: int) -> int:
    v = hist & ((1 << (8 * MINLEN)) - 1)
    return mix32((mix32(v & M32) + (v >> 32) * 0x9E3779B1 + 0x2545F491) & M32) >> (32 - MT_BITS)


# -- the plain implementation -------------------------------------------------------------------
class Reference:
    """Encode or decode `T` steps of bytes with the tables of `st` (Python integers)."""

    @staticmethod
    def lookup(t, chk, h: int, c0: int, bh=None, bits: int = TABLE_BITS) -> int:
        """The slot of context hash h at node c0 in a table of 2^bits slots (v2: one of two, by
        check byte; a stranger replaces the younger one, reset, v4: its bit history too)."""
        hv = mix32((h + c0 * 0x9E3779B1) & M32)
        i = hv >> (32 - bits)
        if chk is None:
            return i
        ck = hv & 255
        if chk[i] == ck:
            return i
        if chk[i ^ 1] == ck:
            return i ^ 1
        if (int(t[i ^ 1]) & 1023) < (int(t[i]) & 1023):
            i ^= 1
        chk[i] = ck
        t[i] = 1 << 31
        if bh is not None:
            bh[i] = 0
        return i

    @staticmethod
    def run(st: CMState, decode: bool, data: np.ndarray, counts: np.ndarray, cum, coder: np.ndarray,
            buf: np.ndarray, pos: np.ndarray, end: np.ndarray, s0: int = 0, s1: int | None = None) -> None:
        """Code (or decode into data) streams s0..s1-1 of one step, or all streams of every step
        (the defaults): the step ends with the slice that reaches the last of data's columns."""
        w, apm, hist, word = st.arrays()[1:5]
        t, chk, bh = st.columns()
        v2, v4 = st.version >= 2, base(st.version) >= 4
        hb, mt, ms, mm = st.match if v2 else (None,) * 4
        H, B = st.history, len(hist)
        NIN, S1, N = nin(st.version), sets1(st.version), nctx(st.version)
        sm = apm[APM_ROWS * 33:]          # views: the counters' maps follow the APM, then (v4)
        icm = sm[N * SM_ROWS:]            # the bit histories' maps and the second APM
        apm2 = icm[N * 256:]
        v6 = base(st.version) == 6
        mix3 = v4 and (not st.use_nn or v6 or base(st.version) == 10)  # three mixers, by byte
        fin = final_mixers(st.version, st.use_nn)   # classes (_cm.c); final mixers over them
        F0 = nsets(st.version) * NIN         # where their weights start
        WS = word_slots(st.version)
        bits = table_bits(st.version)
        last = data.shape[1] if s1 is None else s1
        for step in range(len(counts)):
            tg = int(ms[2 * B]) if v2 else 0
            if v2 and tg >= H:
                raise RuntimeError("cm: more steps than the history holds")
            for s in range(s0, min(int(counts[step]), last)):
                h64 = int(hist[s])
                if v4:
                    ws = [int(v) for v in word[WS * s:WS * s + WS]]
                    wd, prev, line = ws[:3]
                    hs = context_hashes(h64, wd) + context_hashes4(h64, wd, prev, line)
                    if WS == 4:
                        hs += context_hashes12(h64, wd, prev, ws[3])
                    if st.version == BINARY:
                        hs += context_hashes15(h64)
                    if st.version == RECORD:
                        hs += context_hashes16(h64, hb[s * H:], tg, st.record)
                    if v6:
                        hs += [local_hash(hs[k], s) for k in LOCAL]
                    cls12 = byte_class(h64 & 255) * 8 + byte_class((h64 >> 8) & 255)
                    cls3 = byte_class((h64 >> 16) & 255)
                else:
                    hs = context_hashes(h64, int(word[s]))
                c1 = h64 & 255
                byte = 0 if decode else int(data[step, s])
                mlen, eb = (int(ms[B + s]), 0) if v2 else (0, 0)
                if mlen > 0:
                    p2 = int(ms[s])
                    if p2 >= B * H:                     # in the primer, up to its end
                        valid = p2 < B * H + st.primer
                    else:                               # coded already: an earlier step, or
                        valid = p2 % H < tg or (p2 % H == tg and p2 // H < s)   # stream
                    if valid:
                        eb = int(hb[p2])
                    else:
                        mlen = 0
                c0 = 1
                for depth in range(8):
                    idx = [Reference.lookup(t, chk, h, c0, bh, bits) for h in hs]
                    xnn = STRETCH[nn_bit_probability(cum[step, s], c0, depth)] if st.use_nn else 0
                    x = [0 if v6 else xnn]
                    x += [STRETCH[int(t[i]) >> 20] for i in idx]
                    smi = [k * SM_ROWS + min(int(t[i]) & 1023, 15) * 64 + (int(t[i]) >> 26)
                           for k, i in enumerate(idx)]
                    x += [STRETCH[int(sm[j]) >> 4] for j in smi]
                    ici = [k * 256 + int(bh[i]) for k, i in enumerate(idx)] if v4 else []
                    x += [STRETCH[int(icm[j]) >> 4] for j in ici]
                    conf = sum(1 for k in (2, 3, 4, 5) if int(t[idx[k]]) & 1023)
                    set1, mi = conf, -1
                    if v2:
                        if mlen > 0 and ((eb | 256) >> (8 - depth)) == c0:
                            ebit = (eb >> (7 - depth)) & 1
                            mi = len_bucket(mlen) * 2 + ebit
                            x += [STRETCH[int(mm[mi]) >> 20], (ebit * 2 - 1) * min(mlen, 32) * 32]
                            set1 = conf * 4 + (1 if mlen < 16 else (2 if mlen < 32 else 3))
                        else:
                            mlen = 0
                            x += [0, 0]
                            set1 = conf * 4
                    x.append(256)
                    sets = [set1, S1 + c0 + (256 * cls12 if mix3 else 0)]
                    if mix3:
                        sets.append(S1 + SETS2_4 + c0 + 256 * (cls3 + 8 * (mlen > 0)))
                    bases = [k * NIN for k in sets]
                    dots = [max(-2047, min(2047, sum(x[i] * int(w[b0 + i]) for i in range(NIN)) >> 16))
                            for b0 in bases]
                    pms = [squash(d) for d in dots]
                    pm = squash((sum(dots) * 21846) >> 16) if mix3 else squash(sum(dots) >> 1)
                    if fin:
                        y = dots + [xnn, 256]
                        fbases = [F0 + set1 * NF, F0 + (S1 + c0) * NF]
                        fds = [max(-2047, min(2047, sum(y[i] * int(w[b0 + i]) for i in range(NF)) >> 16))
                               for b0 in fbases]
                        pfs = [squash(d) for d in fds]
                        pm = squash(sum(fds) >> 1)
                    sv = STRETCH[pm] + 2048
                    lo, wt = sv >> 7, sv & 127
                    a = ((c1 << 8) | c0) * 33 + lo
                    pa = (int(apm[a]) * (128 - wt) + int(apm[a + 1]) * wt) >> 11
                    if v4:
                        a2 = apm2_row(h64, c0) * 33 + lo
                        pb = (int(apm2[a2]) * (128 - wt) + int(apm2[a2 + 1]) * wt) >> 11
                        p = max(1, min(4095, (2 * pm + 3 * pa + 3 * pb + 4) >> 3))
                    else:
                        p = max(1, min(4095, (pm + 3 * pa + 2) >> 2))
                    if decode:
                        bit = Reference.decode_bit(coder, buf, pos, end, p)
                    else:
                        bit = (byte >> (7 - depth)) & 1
                        Reference.encode_bit(coder, buf, pos, bit, p)
                    for i in idx:
                        t[i] = counter_update(int(t[i]), bit, LIMIT)
                    if mi >= 0:
                        mm[mi] = counter_update(int(mm[mi]), bit, 1023)
                    for b0, pmx in zip(bases, pms, strict=True):
                        err = ((bit << 12) - pmx) * LR
                        for i in range(NIN):
                            v = int(w[b0 + i]) + ((x[i] * err) >> LR_SHIFT)
                            w[b0 + i] = max(-W_MAX, min(W_MAX, v))
                    if fin:
                        for b0, pf in zip(fbases, pfs, strict=True):
                            err = ((bit << 12) - pf) * FLR
                            for i in range(NF):
                                v = int(w[b0 + i]) + ((y[i] * err) >> LR_SHIFT)
                                w[b0 + i] = max(-W_MAX, min(W_MAX, v))
                    for j in smi:
                        sm[j] = int(sm[j]) + (((bit << 16) - int(sm[j])) >> SM_RATE)
                    for j, i in zip(ici, idx, strict=False):     # v4 only (ici empty before)
                        icm[j] = int(icm[j]) + (((bit << 16) - int(icm[j])) >> ICM_RATE)
                        bh[i] = history_update(int(bh[i]), bit)
                    j = a + (wt >> 6)
                    apm[j] = int(apm[j]) + (((bit << 16) + (bit << 7) - bit - bit - int(apm[j])) >> 7)
                    if v4:
                        j = a2 + (wt >> 6)
                        apm2[j] = int(apm2[j]) + (((bit << 16) + (bit << 7) - bit - bit
                                                   - int(apm2[j])) >> 7)
                    c0 = (c0 << 1) | bit
                byte = c0 & 255
                if decode:
                    data[step, s] = byte
                hist[s] = ((int(hist[s]) << 8) | byte) & M64
                if v4:
                    nw = next_word(wd, byte)
                    ended = nw == 0 and wd != 0
                    word[WS * s:WS * s + 3] = (nw, wd if ended else prev, line_update(line, byte))
                    if WS == 4 and ended:
                        word[WS * s + 3] = prev
                else:
                    word[s] = next_word(int(word[s]), byte)
                if v2:
                    Reference.match_update(hb, mt, ms, s, B, H, tg, mlen, byte, int(hist[s]))
            if v2 and last == data.shape[1]:
                ms[2 * B] += 1

    @staticmethod
    def match_update(hb, mt, ms, s, B, H, tg, mlen, byte, hist) -> None:
        """After stream s coded `byte` at step tg: extend its match or look for a new one."""
        here = s * H + tg
        hb[here] = byte
        if mlen > 0:
            ms[s] += 1
            ms[B + s] = min(mlen + 1, MAXLEN)
        else:
            ms[B + s] = 0
        if tg + 1 < MINLEN:
            return
        h = match_hash(hist)
        if ms[B + s] == 0 and mt[h] > 0:
            cand = int(mt[h]) - 1
            i2, n = (cand - B * H if cand >= B * H else cand % H), 0   # its offset in its region
            while n < CHECKLEN and i2 - 1 - n >= 0 and tg - n >= 0 and \
                    hb[cand - 1 - n] == hb[here - n]:
                n += 1
            if n >= MINLEN:
                ms[s], ms[B + s] = cand, n
        mt[h] = here + 2

    @staticmethod
    def encode_bit(c, out, pos, bit, p):
        x1, x2 = int(c[0]), int(c[1])
        xmid = x1 + ((x2 - x1) >> 12) * p + ((((x2 - x1) & 0xFFF) * p) >> 12)
        if bit:
            x2 = xmid
        else:
            x1 = xmid + 1
        while ((x1 ^ x2) & 0xFF000000) == 0:
            out[pos[0]] = x2 >> 24
            pos[0] += 1
            x1 = (x1 << 8) & M32
            x2 = ((x2 << 8) & M32) | 255
        c[0], c[1] = x1, x2

    @staticmethod
    def decode_bit(c, inp, pos, end, p):
        x1, x2, x = int(c[0]), int(c[1]), int(c[2])
        xmid = x1 + ((x2 - x1) >> 12) * p + ((((x2 - x1) & 0xFFF) * p) >> 12)
        bit = 1 if x <= xmid else 0
        if bit:
            x2 = xmid
        else:
            x1 = xmid + 1
        while ((x1 ^ x2) & 0xFF000000) == 0:
            x1 = (x1 << 8) & M32
            x2 = ((x2 << 8) & M32) | 255
            nxt = int(inp[pos[0]]) if pos[0] < end[0] else 0
            pos[0] += 1
            x = ((x << 8) & M32) | nxt
        c[0], c[1], c[2] = x1, x2, x
        return bit


_c = None
if os.environ.get("UMOEC_CM_KERNELS", "") != "python":
    try:  # the compiled twin, when pip built it
        from . import _cm as _c
    except ImportError:
        _c = None


def backend() -> str:
    return "c" if _c is not None else "python"


def _run(st: CMState, decode: bool, data, counts, cum, coder, buf, pos, end, lo: int = 0,
         hi: int | None = None) -> None:
    T, B = data.shape
    hi = B if hi is None else hi
    if _c is None:
        Reference.run(st, decode, data, counts, cum, coder, buf, pos, end, lo, hi)
        return
    match = st.match or (None,) * 4
    _c.run(int(decode), int(st.use_nn), st.version, T, B, len(buf), st.history, st.primer, lo, hi,
           data, counts, cum if st.use_nn else None, *st.arrays()[:5], coder, buf, pos, end, *match,
           *((st.record,) if st.record else ()))   # (optional: builds before version 16 run too)


def describe(version: int = VERSION) -> str:
    """What a file's fingerprint records of this stage (the decoder finds the version by it):
    a change here must add a version."""
    out = (f"umoec.codec.cm/{version} table_bits={table_bits(version)} orders={list(ORDERS)} "
           f"nin={nin(version)} lr={LR}>>{LR_SHIFT} limit={LIMIT} sm_rate={SM_RATE}")
    if version >= 2:
        out += f" check=2way match=minlen{MINLEN},mt{MT_BITS},check{CHECKLEN}"
    if base(version) >= 4:
        out += (f" contexts=word2,sparse23,column40 histories=7bit,rate{ICM_RATE}"
                " mixers=nn:sets1,c0;none:sets1,c0xclass12,c0xclass3xmatch apm2=order2")
    if base(version) == 6:
        out += f" local={list(LOCAL)} nn=final:sets1,c0,lr{FLR},w{FW_MIX},{FW_NN}"
    if base(version) == 10:
        out += f" final=sets1,c0,lr{FLR},w{FW_MIX},{FW_NN}"
    if version in WORDS4:
        out += " contexts12=prevword+c1,prevword+c2,word3+word,order5 words=4"
    if version == BINARY:
        out += " contexts15=c2,c3c4,c4c8,c1c3"
    if version == RECORD:
        out += " contexts16=c2,c3c4,c4c8,c1c3,rec1rec2,rec1c1"
    if is_primed(version):
        out += " primed=model"
    return out


def learn(text: bytes, version: int = PRIMED) -> CMState:
    """The one-stream state of stage `version` (a primed one) after coding `text` without a
    network (its output is dropped): what a primer teaches the stage."""
    data = np.frombuffer(text, dtype=np.uint8)[:, None]
    st = CMState(1, False, len(data), version)
    if len(data):
        enc = BlockEncoder(st, len(data))
        enc.steps(data, np.ones(len(data), dtype=np.int64))
    return st


_taught: list = []            # [((sha256 of the text, version), its learned state)]: the last one
_taught_lock = threading.Lock()


def taught(text: bytes, version: int = PRIMED) -> CMState:
    """`learn(text, version)`, kept for the next file of this process (only read after)."""
    key = (hashlib.sha256(text).digest(), version)
    with _taught_lock:
        if not _taught or _taught[0][0] != key:
            # the previous text's state goes first: auto's samples (cm, then fast) learn two
            # versions in turn, and two states of 2^25 slots at once cost ~290 MB more at peak
            _taught.clear()
            _taught.append((key, learn(text, version)))
        return _taught[0][1]


def forget() -> None:
    """Drop the kept primer state (benchmarks time a new process's first file)."""
    with _taught_lock:
        _taught.clear()


def prime(st: CMState, taught: CMState, text: bytes) -> None:
    """Start `st` (a primed version, `primer` = len(text)) from what `learn(text, st.version)`
    learned: its counters, maps, APMs (v5: bit histories); the match model's table points into
    `text`, placed after the streams' histories. The mixers start fresh (weights learned without
    the network trust it too little: 0.4% larger on Python source; without a network they are
    kept), and so does each stream's own context (previous bytes, word, line)."""
    if (not is_primed(st.version) or taught.version != st.version or st.primer != len(text)
            or taught.primer or taught.history != max(1, len(text))):
        raise ValueError("prime: the state was not made for this primer")
    st.slots[:], st.apm[:] = taught.slots, taught.apm
    if not st.use_nn or base(st.version) == 6:   # mixers that see no network: as learned
        st.w[:] = taught.w                        # (1.5% smaller; v6's final mixers start fresh)
    hb, mt, _, mm = st.match
    offset = len(hb) - len(text)                  # streams x history
    mm[:] = taught.match[3]
    hb[offset:] = np.frombuffer(text, dtype=np.uint8)
    tmt = taught.match[1]
    mt[:] = np.where(tmt > 0, tmt + offset, 0)


class NoNetwork:
    """The predictor of the `cm` profile: nothing but the mixing stage; with a model's primer
    (`primer`, the model's hash `model_hash`), the stage primed with that text and no network;
    without one, `binary`: version 15's contexts for binary data (the file says so by its
    fingerprint, which names the stage's version), `record` (2..MAX_RECORD): version 16's for
    records of that many bytes (the fingerprint names the length too; the frame's header
    carries it for the decoder)."""

    def __init__(self, primer: bytes = b"", model_hash: str = "", binary: bool = False,
                 record: int = 0):
        self.primer, self.model_hash = bytes(primer), model_hash
        self.binary = bool(binary) and not self.primer
        self.record = 0 if self.primer else int(record)
        if self.record and not 2 <= self.record <= MAX_RECORD:
            raise ValueError(f"records of {self.record} bytes: 2 to {MAX_RECORD} allowed")

    def fingerprint(self) -> bytes:
        if self.primer:
            return b"no network|primer of " + self.model_hash.encode()
        return b"no network" + (f"|records of {self.record}".encode() if self.record else b"")


# -- block coding ---------------------------------------------------------------------------------
def max_payload_bytes(symbols: int, lanes: int) -> int:
    return symbols * MAX_BYTES_PER_BYTE + 1


def min_payload_bytes(lanes: int) -> int:
    return 1                  # the flushed byte


class BlockEncoder:
    """Codes one block's bytes, step by step (with the network's cumulative frequencies) or all
    at once (`steps`, the cm profile), into one arithmetic-coded stream; `finish()` returns the
    payload: the coder's bytes and one flushed byte (the decoder pads with zeros, so the smallest
    value >= x1 whose low 24 bits are 0 identifies the final interval)."""

    def __init__(self, st: CMState, steps: int):
        self.st, self.lanes = st, st.streams     # every stream's lane, even ended ones
        self.coder = np.array([0, M32, 0], dtype=np.uint32)
        self.buf = np.zeros(steps * self.lanes * MAX_BYTES_PER_BYTE + 8, dtype=np.uint8)
        self.pos = np.zeros(1, dtype=np.int64)
        self.end = np.zeros(1, dtype=np.int64)

    def steps(self, data: np.ndarray, counts: np.ndarray, cum=None, lanes: tuple | None = None) -> None:
        """data (T, >= counts[0]) uint8; cum (T, lanes, 257) int64 when the stage has a network.
        lanes (lo, hi): only those streams of one step (slices in order; the step ends with the
        one that reaches the block's last lane)."""
        data = np.array(data[:, :self.lanes], dtype=np.uint8, order="C")   # a copy C can read
        _run(self.st, False, data, np.ascontiguousarray(counts, dtype=np.int64),
             None if cum is None else np.ascontiguousarray(cum, dtype=np.int64),
             self.coder, self.buf, self.pos, self.end, *(lanes or ()))

    def finish(self) -> bytes:
        top = (int(self.coder[0]) + 0xFFFFFF) >> 24          # < 256: x2's top byte is larger
        return self.buf[:int(self.pos[0])].tobytes() + bytes([top])


class BlockDecoder:
    """Decodes one block's payload with `steps` calls in the encoder's order; `finish()` checks
    that exactly the payload was read (plus the 3 zero bytes of padding the coder's window
    reaches past the flushed byte)."""

    def __init__(self, st: CMState, payload: bytes, steps: int):
        self.st, self.lanes = st, st.streams     # every stream's lane, even ended ones
        if not payload:
            raise FormatError("cm block payload is empty")
        cap = max(len(payload), steps * self.lanes * MAX_BYTES_PER_BYTE + 8)
        self.buf = np.zeros(cap, dtype=np.uint8)
        self.buf[:len(payload)] = np.frombuffer(payload, dtype=np.uint8)
        self.end = np.array([len(payload)], dtype=np.int64)
        b = [int(v) for v in self.buf[:4]]
        self.coder = np.array([0, M32, (b[0] << 24) | (b[1] << 16) | (b[2] << 8) | b[3]],
                              dtype=np.uint32)
        self.pos = np.array([4], dtype=np.int64)

    def steps(self, counts: np.ndarray, cum=None, lanes: tuple | None = None) -> np.ndarray:
        """Decode len(counts) steps; returns (T, lanes) uint8 (columns past counts[t] are 0).
        lanes (lo, hi): as BlockEncoder.steps (the other columns are 0 too)."""
        data = np.zeros((len(counts), self.lanes), dtype=np.uint8)
        _run(self.st, True, data, np.ascontiguousarray(counts, dtype=np.int64),
             None if cum is None else np.ascontiguousarray(cum, dtype=np.int64),
             self.coder, self.buf, self.pos, self.end, *(lanes or ()))
        return data

    def finish(self) -> None:
        if int(self.pos[0]) != int(self.end[0]) + 3:
            raise FormatError(f"cm block payload: {int(self.end[0])} bytes written, the decoder "
                              f"read {int(self.pos[0]) - 3}")
