"""The x86 filter: relative call and jump targets made absolute before coding, undone after.

x86 code calls a function as E8 (call) or E9 (jmp) followed by a 32-bit little-endian
displacement from the next instruction. The same function called from many places has as many
different displacements; made absolute (displacement + position) they repeat, and the context
models see the repeats (the filter of paq8, lpaq and xz's BCJ, here in paq8's form). Scanning
left to right, every E8/E9 byte with four bytes after it is an opcode and the four bytes after it
are skipped; its displacement is changed only when it lies in [-2^24, 2^24) (a near target: far
ones are rarely calls), and the result is wrapped into that same range. So the inverse finds
the same opcodes (opcode bytes never change, skipped bytes are skipped either way) and the same
displacements to change (in range before <=> in range after): a bijection on bytes of any
length, positions counted from the frame's start. Integer arithmetic only.
"""
from __future__ import annotations

import numpy as np

NEAR = 1 << 24            # displacements in [-NEAR, NEAR) are changed, modulo 2 * NEAR
MIN_OPCODES = 1 / 256     # share of bytes that must be near E8/E9 opcodes for the filter to be tried


def _opcodes(buf: np.ndarray) -> np.ndarray:
    """Positions of the E8/E9 bytes read as opcodes (each with its four bytes, not inside
    another's four bytes), in order."""
    cand = np.flatnonzero((buf[:max(0, len(buf) - 4)] & 0xFE) == 0xE8)
    if len(cand) == 0:
        return cand
    # a candidate within 4 bytes after the previous one may be inside an opcode's displacement:
    # only those runs need the left-to-right walk
    close = np.flatnonzero(np.diff(cand) < 5) + 1
    if len(close) == 0:
        return cand
    keep = np.ones(len(cand), dtype=bool)
    last = -5
    prev_close = -2
    for k in close.tolist():
        if k - 1 != prev_close:           # a new run: its first member was walked to as free
            last = int(cand[k - 1])
        prev_close = k
        if cand[k] - last < 5:
            keep[k] = False
        else:
            last = int(cand[k])
    return cand[keep]


def _displacements(buf: np.ndarray, at: np.ndarray) -> np.ndarray:
    """The signed 32-bit little-endian values after each opcode position (as int64)."""
    value = np.zeros(len(at), dtype=np.int64)
    for i in range(4):
        value |= buf[at + 1 + i].astype(np.int64) << (8 * i)
    return value - ((value >> 31) << 32)


def _apply(data: bytes, sign: int) -> bytes:
    buf = np.frombuffer(data, dtype=np.uint8).copy()
    at = _opcodes(buf)
    disp = _displacements(buf, at)
    near = (disp >= -NEAR) & (disp < NEAR)
    at, disp = at[near], disp[near]
    new = ((disp + sign * at + NEAR) & (2 * NEAR - 1)) - NEAR
    for i in range(4):
        buf[at + 1 + i] = (new >> (8 * i)) & 0xFF
    return buf.tobytes()


def x86_forward(data: bytes) -> bytes:
    """`data` with every near call/jump displacement made absolute (what is coded)."""
    return _apply(data, 1)


def x86_inverse(data: bytes) -> bytes:
    """The original of x86_forward's output."""
    return _apply(data, -1)


def near_opcodes(data: bytes) -> np.ndarray:
    """Positions of the E8/E9 opcodes of `data` that have a near displacement (those the filter
    changes)."""
    if len(data) < 5:
        return np.zeros(0, dtype=np.int64)
    buf = np.frombuffer(data, dtype=np.uint8)
    at = _opcodes(buf)
    disp = _displacements(buf, at)
    return at[(disp >= -NEAR) & (disp < NEAR)]


def near_opcode_share(data: bytes) -> float:
    """How many of `data`'s bytes are near E8/E9 opcodes, as a share: x86 code has ~1-2.5%, text
    and most other data almost none (random bytes 0.006%)."""
    return len(near_opcodes(data)) / len(data) if data else 0.0


def looks_like_code(data: bytes) -> bool:
    """At least MIN_OPCODES of `data`'s bytes are near opcodes. Counted first without the walk
    that drops E8/E9 bytes inside another's displacement (an upper bound, vectorised): bytes
    dense in E8/E9 (all E8, CJK text in UTF-8) take the walk's slow path, and they fail here."""
    if len(data) < 5:
        return False
    buf = np.frombuffer(data, dtype=np.uint8)
    every = np.flatnonzero((buf[:len(buf) - 4] & 0xFE) == 0xE8)
    disp = _displacements(buf, every)
    if np.count_nonzero((disp >= -NEAR) & (disp < NEAR)) < MIN_OPCODES * len(data):
        return False
    return near_opcode_share(data) >= MIN_OPCODES


def densest(data: bytes, size: int) -> bytes:
    """The `size` bytes of `data` that hold the most near opcodes (where the filter acts: an
    executable's code, not its tables), starting at one of them."""
    at = near_opcodes(data)
    if len(data) <= size or len(at) == 0:
        return data[:size]
    counts = np.searchsorted(at, at + size) - np.arange(len(at))
    start = min(int(at[int(np.argmax(counts))]), len(data) - size)
    return data[start:start + size]
