"""Geometry shared by encoder, decoder and container parser: streams, steps and blocks.

n bytes are split into B contiguous streams whose lengths differ by at most one: with
q, r = divmod(n, B), streams 0..r-1 hold q+1 bytes and the others q. Step t codes byte t of every
stream that is long enough; the active streams at a step are always a prefix 0..k_t-1
(k_t = B for t < q, k_t = r at t = q). A block is `ceil(block_size / B)` consecutive steps, so it
holds about block_size bytes; the last block may be shorter.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Layout:
    size: int          # n, bytes of the original
    streams: int       # B
    block_size: int    # bytes per block (before division into steps)

    @property
    def steps(self) -> int:
        """T: steps needed to code every stream (the longest stream's length)."""
        return -(-self.size // self.streams)

    @property
    def steps_per_block(self) -> int:
        return -(-self.block_size // self.streams)

    @property
    def n_blocks(self) -> int:
        return -(-self.steps // self.steps_per_block)

    def block_steps(self, index: int) -> tuple[int, int]:
        t0 = index * self.steps_per_block
        return t0, min(t0 + self.steps_per_block, self.steps)

    def counts(self, t0: int, t1: int) -> np.ndarray:
        """(t1 - t0,) active streams at each step of [t0, t1)."""
        q, r = divmod(self.size, self.streams)
        t = np.arange(t0, t1)
        return np.where(t < q, self.streams, r).astype(np.int64)

    def block_symbols(self, index: int) -> tuple[int, int]:
        """(symbols coded in the block, streams active at its first step) without allocating."""
        t0, t1 = self.block_steps(index)
        q, r = divmod(self.size, self.streams)
        full = max(0, min(t1, q) - t0)
        partial = (t1 - t0) - full
        return full * self.streams + partial * r, (self.streams if full else r)

    def lengths(self) -> np.ndarray:
        q, r = divmod(self.size, self.streams)
        return np.where(np.arange(self.streams) < r, q + 1, q).astype(np.int64)

    def to_matrix(self, data: bytes) -> np.ndarray:
        """(B, T) uint8: row i is stream i, zero-padded at the end."""
        q, r = divmod(self.size, self.streams)
        flat = np.frombuffer(data, dtype=np.uint8)
        out = np.zeros((self.streams, self.steps), dtype=np.uint8)
        head = r * (q + 1)
        if r:
            out[:r, :q + 1] = flat[:head].reshape(r, q + 1)
        out[r:, :q] = flat[head:].reshape(self.streams - r, q)
        return out

    def from_matrix(self, matrix: np.ndarray) -> bytes:
        """Inverse of to_matrix: concatenate each stream's first `length` bytes."""
        valid = np.arange(self.steps)[None, :] < self.lengths()[:, None]
        return matrix[valid].tobytes()
