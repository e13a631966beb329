"""What the codec drives: a byte predictor in step form (the protocol every entropy model of
umoec/predict/ and the coding engine follow).

Glossary: B = streams (the batch the predictor is stepped with, fixed for a whole file);
prev_bytes (B,) int64 = the byte each stream coded at the previous step (BOS = 0 at the first
step, 0 for a stream that has ended); logits (B, 256) float32, natural-log scale.

The codec calls, identically when encoding and decoding:
    state = p.init_state(B)
    for every step: logits, state = p.step(prev_bytes, state)      # then codes one byte per stream
    every `adapt_every` coded bytes (if > 0 and p has `adapt`): state = p.adapt(recent, state)
where recent[i] is the bytes stream i coded since the previous adaptation round.
`fingerprint()` must change whenever any of weights, config or numerics (library versions,
threads, dtype) could change the logits; the container stores its sha256 and the decoder refuses
a file whose fingerprint differs.
"""
from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np

BOS = 0
MAX_STREAMS = 1 << 15


@runtime_checkable
class Predictor(Protocol):
    def init_state(self, n_streams: int) -> Any: ...

    def step(self, prev_bytes: np.ndarray, state: Any) -> tuple[Any, Any]: ...

    def fingerprint(self) -> bytes: ...


@runtime_checkable
class AdaptivePredictor(Predictor, Protocol):
    def adapt(self, recent: list[bytes], state: Any) -> Any: ...
