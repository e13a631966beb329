"""Sample bytes from a checkpoint and score text byte by byte (torch; the cockpit's Generate tab
runs these in its jobs, gui/services/generation.py).

Both use the model's step form exactly as the codec does (umoec/compress/neural.py builds the
model; `state = model.init_state(1, g)`, `logits, state = model.step(prev_byte, state)`, the first
step fed BOS = 0):
- `sample`: the global vector g is computed from the prompt (the only text known before
  sampling); the prompt is fed byte by byte, then each next byte is drawn from
  softmax(logits / temperature) restricted to the top-k bytes with a seeded torch.Generator
  (temperature 0 = greedy). Same checkpoint + prompt + settings + seed = same bytes.
- `surprisal_bits`: -log2 p(byte | the bytes before it) for every byte of the text, with g over
  the whole text as the compressor stores it in the .umc header. Their sum is the ideal code
  length; the real coder adds only the rounding of probabilities to integer frequencies.
"""
from __future__ import annotations

import math
import threading
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch

from .compress.neural import LoadedModel, ModelLoadError, globals_for, load_model
from .compress.profiles import Profile
from .predict.protocol import BOS
from .train.checkpoint import CheckpointError
from .units import nats_to_bits


class GenerateError(RuntimeError):
    """The checkpoint cannot be used here, or the settings are invalid; the message says why."""


# The checkpoint's own early-exit and cascade settings, no online adaptation.
PLAYGROUND = Profile("playground", 1, None, None, False, 1,
                     "one stream, the checkpoint's inference settings, no LoRA adaptation")
MAX_SAMPLE_BYTES = 4096
MAX_PROMPT_BYTES = 4096
MAX_SCORE_BYTES = 8192


# -- models ----------------------------------------------------------------------------------------
def load(checkpoint: Path) -> LoadedModel:
    """The checkpoint's model in its step form, in eval mode (GenerateError when it cannot be
    used here: missing, simulated, or from another architecture)."""
    checkpoint = Path(checkpoint)
    if not checkpoint.is_file():
        raise GenerateError(f"checkpoint {checkpoint} does not exist (deleted?)")
    try:
        return load_model(checkpoint, PLAYGROUND)
    except (CheckpointError, ModelLoadError) as exc:
        raise GenerateError(str(exc)) from None


def _init(loaded: LoadedModel, g: np.ndarray):
    gt = torch.from_numpy(np.asarray(g, dtype=np.float32)).unsqueeze(0)       # (1, G)
    return loaded.model.init_state(1, gt)


def _step(loaded: LoadedModel, byte: int, state):
    logits, state = loaded.model.step(torch.tensor([byte], dtype=torch.long), state)
    return logits[0].to(torch.float32), state                                    # (256,)


# -- sampling --------------------------------------------------------------------------------------
def check_sampling(temperature, top_k, max_bytes, seed) -> tuple[float, int, int, int]:
    try:
        t, k, n, s = float(temperature), int(top_k), int(max_bytes), int(seed)
    except (TypeError, ValueError):
        raise GenerateError("temperature, top-k, max bytes and seed must be numbers") from None
    if not (math.isfinite(t) and 0.0 <= t <= 5.0):
        raise GenerateError(f"temperature {t:g} must be between 0 (greedy) and 5")
    if not 0 <= k <= 256:
        raise GenerateError(f"top-k {k} must be between 0 (off) and 256")
    if not 1 <= n <= MAX_SAMPLE_BYTES:
        raise GenerateError(f"max bytes {n} must be between 1 and {MAX_SAMPLE_BYTES}")
    if not 0 <= s < 2 ** 63:
        raise GenerateError(f"seed {s} must be a non-negative integer")
    return t, k, n, s


def next_byte(logits: torch.Tensor, temperature: float, top_k: int,
              gen: torch.Generator) -> int:
    """Draw one byte from logits (256,): greedy at temperature 0, else top-k + temperature."""
    if temperature == 0.0:
        return int(torch.argmax(logits))
    scaled = logits / temperature
    if 0 < top_k < scaled.shape[0]:
        kth = torch.topk(scaled, top_k).values[-1]
        scaled = scaled.masked_fill(scaled < kth, float("-inf"))
    probs = torch.softmax(scaled, dim=-1)
    return int(torch.multinomial(probs, 1, generator=gen))


def sample(loaded: LoadedModel, prompt: bytes, *, max_bytes: int, temperature: float,
           top_k: int, seed: int, on_byte: Callable[[int], None] | None = None,
           cancel: threading.Event | None = None) -> bytes:
    """Up to max_bytes bytes continuing `prompt` (fewer if cancelled)."""
    temperature, top_k, max_bytes, seed = check_sampling(temperature, top_k, max_bytes, seed)
    gen = torch.Generator().manual_seed(seed)
    state = _init(loaded, globals_for(prompt, loaded.cfg))
    logits, state = _step(loaded, BOS, state)
    for b in prompt:
        if cancel is not None and cancel.is_set():
            return b""
        logits, state = _step(loaded, b, state)
    out = bytearray()
    while len(out) < max_bytes and not (cancel is not None and cancel.is_set()):
        b = next_byte(logits, temperature, top_k, gen)
        out.append(b)
        if on_byte is not None:
            on_byte(b)
        if len(out) < max_bytes:
            logits, state = _step(loaded, b, state)
    return bytes(out)


# -- surprisal -------------------------------------------------------------------------------------
def surprisal_bits(loaded: LoadedModel, text: bytes, *,
                   on_progress: Callable[[int], None] | None = None,
                   cancel: threading.Event | None = None) -> np.ndarray:
    """float64 (len(text),): -log2 p of each byte given the ones before it (the codec's view)."""
    state = _init(loaded, globals_for(text, loaded.cfg))
    bits = np.zeros(len(text), dtype=np.float64)
    prev = BOS
    for i, b in enumerate(text):
        if cancel is not None and cancel.is_set():
            return bits[:i]
        logits, state = _step(loaded, prev, state)
        bits[i] = nats_to_bits(-float(torch.log_softmax(logits.double(), dim=-1)[b]))
        prev = b
        if on_progress is not None and (i % 64 == 63 or i == len(text) - 1):
            on_progress(i + 1)
    return bits
