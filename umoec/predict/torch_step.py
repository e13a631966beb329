"""Adapter from a torch model with `init_state(batch_size, ...)` / `step(byte, state)` to Predictor.

The codec itself never imports torch; this module does, lazily. The model contract assumed:
    state = model.init_state(batch_size, *init_args)
    logits, state = model.step(byte, state)      # byte: LongTensor (B,), logits: (B, 256)
`model_fingerprint` hashes what decides the logits: every tensor of the state_dict (name, dtype,
shape, bytes), the config, the torch version, the thread count and the dtype policy.
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np


def model_fingerprint(model, config: dict | None = None, *, threads: int | None = None,
                      extra: dict | None = None) -> bytes:
    """sha256 of weights + config + numerics (torch version, threads, default dtype)."""
    import torch

    h = hashlib.sha256(b"umoec.codec.model_fingerprint/1\0")
    for name, tensor in sorted(model.state_dict().items()):
        t = tensor.detach().cpu().contiguous()
        h.update(f"{name}|{t.dtype}|{tuple(t.shape)}\0".encode())
        h.update(t.view(torch.uint8).numpy().tobytes() if t.numel() else b"")
    numerics = {"torch": torch.__version__, "threads": threads if threads is not None
                else torch.get_num_threads(), "dtype": str(torch.get_default_dtype())}
    h.update(json.dumps({"config": config or {}, "numerics": numerics, "extra": extra or {}},
                        sort_keys=True, default=str).encode())
    return h.digest()


class StepModelPredictor:
    """Predictor over a torch model in step form; fp32 logits on the CPU, no autograd."""

    def __init__(self, model, fingerprint: bytes, *, init_args: Sequence[Any] = (),
                 adapt: Callable[[list, Any], Any] | None = None):
        self.model = model
        self._fingerprint = bytes(fingerprint)
        self.init_args = tuple(init_args)
        if adapt is not None:
            self.adapt = adapt      # (recent bytes per stream, state) -> state; same on both sides

    def fingerprint(self) -> bytes:
        return self._fingerprint

    def init_state(self, n_streams: int):
        import torch

        with torch.no_grad():
            return self.model.init_state(n_streams, *self.init_args)

    def step(self, prev_bytes: np.ndarray, state):
        import torch

        with torch.no_grad():
            logits, state = self.model.step(torch.from_numpy(np.asarray(prev_bytes, dtype=np.int64)), state)
        return logits.detach().to(torch.float32).cpu().numpy(), state
