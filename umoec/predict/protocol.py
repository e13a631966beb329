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
A predictor whose streams run in several processes may also offer `step_parts` (see `parts`):
the same logits, handed over a slice of the streams at a time, so that the coder works on the
first slices while another process still computes the last (a coder's emit may return the bytes
the slice coded, which such a predictor hands on at once to the process that computes those
streams' next step: a decoder's way to overlap); and `foresee(next_prev, state)`:
the encoder, which knows every byte, tells it the prev_bytes of the step after the next one, so
another process can compute that step while this one codes (see `foresee`); such an encoder
starts through `start(p, B, foreseen=True)`, which takes `init_state_foreseen` where p has one
(the work shared for a coding that foresees). None of these may change a logit: a decoder,
which cannot foresee, gets the same.
`fingerprint()` must change whenever any of weights, config or numerics (library versions,
threads, dtype) could change the logits; the container stores its sha256 and the decoder refuses
a file whose fingerprint differs.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

import numpy as np

BOS = 0
MAX_STREAMS = 1 << 15

# (lo, hi, logits of streams lo..hi-1) -> the bytes they coded at this step, or None
Emit = Callable[[int, int, np.ndarray], "np.ndarray | None"]


@runtime_checkable
class Predictor(Protocol):
    def init_state(self, n_streams: int) -> Any: ...

    def step(self, prev_bytes: np.ndarray, state: Any) -> tuple[Any, Any]: ...

    def fingerprint(self) -> bytes: ...


@runtime_checkable
class AdaptivePredictor(Predictor, Protocol):
    def adapt(self, recent: list[bytes], state: Any) -> Any: ...


def parts(predictor, prev_bytes: np.ndarray, state: Any, emit: Emit,
          meanwhile: Callable[[], None] | None = None) -> Any:
    """One step, its logits handed to `emit` slice by slice in stream order (lo of the first is
    0, hi of the last is B; each slice's logits are those `step` gives its rows). `meanwhile`
    runs once before the first slice, while other processes compute theirs. -> the new state.
    A predictor without `step_parts` hands over all its streams at once."""
    own = getattr(predictor, "step_parts", None)
    if own is not None:
        return own(prev_bytes, state, emit, meanwhile)
    if meanwhile is not None:
        meanwhile()
    logits, state = predictor.step(prev_bytes, state)
    emit(0, len(logits), logits)
    return state


def start(predictor, n_streams: int, foreseen: bool = False) -> Any:
    """`predictor.init_state(n_streams)`, or, for a coding that will `foresee` each next step
    (an encoder), its `init_state_foreseen` where it has one: the same logits follow, with the
    work shared for that coding (the engine's split gives its other processes more streams)."""
    own = getattr(predictor, "init_state_foreseen", None) if foreseen else None
    return own(n_streams) if own is not None else predictor.init_state(n_streams)


def foresee(predictor, next_prev: np.ndarray, state: Any) -> None:
    """Tell `predictor` (if it listens) the prev_bytes it will be given at the step after the next
    `parts`/`step` call; an encoder calls it before each step but the last, a decoder never."""
    own = getattr(predictor, "foresee", None)
    if own is not None:
        own(next_prev, state)


def whole(step_parts, prev_bytes: np.ndarray, state: Any):
    """`step` from a `step_parts`: the slices' logits joined -> (logits (B, V), state)."""
    got: list[np.ndarray] = []
    state = step_parts(prev_bytes, state, lambda lo, hi, logits: got.append(logits), None)
    return (got[0] if len(got) == 1 else np.concatenate(got)), state
