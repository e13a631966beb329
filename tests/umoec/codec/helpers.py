"""Shared test material for the codec: deterministic inputs and small predictors."""
from __future__ import annotations

import hashlib

import numpy as np

from umoec.codec.probs import logits_to_freqs, symbol_intervals

TEXT = (b"The quick brown fox jumps over the lazy dog. " * 40
        + b"def step(self, prev, state):\n    return logits, state\n" * 30)


def pseudo_random_bytes(n: int, seed: bytes = b"umoec") -> bytes:
    """Deterministic, platform- and library-independent bytes (sha256 in counter mode)."""
    out = bytearray()
    counter = 0
    while len(out) < n:
        out += hashlib.sha256(seed + counter.to_bytes(8, "little")).digest()
        counter += 1
    return bytes(out[:n])


def formula_logits(t: int, lanes: int) -> np.ndarray:
    """(lanes, 256) float32 logits from integer arithmetic only (for golden bitstreams)."""
    s = np.arange(256)[None, :]
    i = np.arange(lanes)[:, None]
    return (((s * 37 + t * 11 + i * 5) % 97) / 8.0 - (s == (t * 7 + i) % 256) * -6.0).astype(np.float32)


def coder_inputs(freq_rows: np.ndarray, symbols: np.ndarray):
    """(T, B, 256) frequencies and (T, B) symbols -> (starts, freqs) of the coded symbols."""
    T, B, _ = freq_rows.shape
    st, fr = symbol_intervals(freq_rows.reshape(T * B, 256), symbols.reshape(-1))
    return st.reshape(T, B), fr.reshape(T, B)


def random_block(rng, T: int, B: int, n: int, skew=(0.3, 5.0)):
    """Random distributions per (step, lane) and symbols drawn from them."""
    logits = (rng.standard_normal((T * B, 256)) * rng.uniform(*skew, (T * B, 1))).astype(np.float32)
    freqs = logits_to_freqs(logits, n).reshape(T, B, 256)
    cum = np.cumsum(freqs, axis=-1)
    u = rng.integers(0, 1 << n, (T, B, 1))
    symbols = (cum <= u).sum(-1)
    return freqs, symbols


class CyclePredictor:
    """Logits from a fixed function of the previous byte and a per-stream step counter."""

    def __init__(self, sharp: float = 1.0, salt: int = 0):
        self.sharp, self.salt = sharp, salt

    def fingerprint(self) -> bytes:
        return f"cycle/{self.sharp}/{self.salt}".encode()

    def init_state(self, n):
        return {"t": np.zeros(n, dtype=np.int64)}

    def step(self, prev, state):
        s = np.arange(256)[None, :]
        favourite = (np.asarray(prev)[:, None] + 1 + self.salt) % 256
        logits = np.where(s == favourite, 4.0, ((s * 13 + state["t"][:, None]) % 7) * 0.25) * self.sharp
        state["t"] = state["t"] + 1
        return logits.astype(np.float32), state


class AdaptingPredictor(CyclePredictor):
    """Records every adapt call; each call shifts the favourite byte, so adapting changes coding."""

    def __init__(self):
        super().__init__()
        self.calls = []

    def fingerprint(self) -> bytes:
        return b"adapting/1"

    def adapt(self, recent, state):
        self.calls.append([bytes(r) for r in recent])
        self.salt = (self.salt + sum(len(r) for r in recent) + sum(sum(r) for r in recent)) % 256
        return state


class SourcePredictor:
    """Knows the true distribution of `sample_source` data but reports it at temperature 1/scale."""

    def __init__(self, scale: float):
        self.scale = scale

    def fingerprint(self) -> bytes:
        return f"source/{self.scale}".encode()

    def init_state(self, n):
        return None

    def step(self, prev, state):
        return np.tile(SOURCE_LOGITS * self.scale, (len(prev), 1)).astype(np.float32), state


SOURCE_LOGITS = (np.arange(256) % 16 == 0) * 3.0 - np.arange(256) / 64.0


def sample_source(n: int, seed: int = 0) -> bytes:
    p = np.exp(SOURCE_LOGITS - SOURCE_LOGITS.max())
    p /= p.sum()
    return np.random.default_rng(seed).choice(256, size=n, p=p).astype(np.uint8).tobytes()


def x86_like(n: int, seed: int = 1) -> bytes:
    """Bytes shaped like x86 code: short runs of a few instruction bytes between E8 calls to a
    dozen fixed functions (each call's displacement relative to the next instruction, as a
    compiler writes it), so the absolute targets repeat where the displacements do not."""
    rng = np.random.default_rng(seed)
    targets = rng.integers(0, 1 << 20, 12)
    vocab = np.frombuffer(b"\x48\x89\xc7\x8b\x45\xf8\x31\xc0\x5d\xc3\x55\x53\x41\x54\x0f\x1f",
                          dtype=np.uint8)
    out = bytearray()
    while len(out) < n:
        out += vocab[rng.integers(0, len(vocab), int(rng.integers(3, 12)))].tobytes()
        target = int(targets[int(rng.integers(0, len(targets)))])
        out += b"\xe8" + (target - (len(out) + 5)).to_bytes(4, "little", signed=True)
    return bytes(out[:n])
