"""A coding model as the codec's Predictor (umoec/predict/protocol.py), exact on every machine.

Encoder and decoder build it from the same inputs: the model file, the profile's inference
settings (exit and cascade thresholds) and the input's global vector from the .umc header.
Its logits are the engine's integers times 2**-12 as float32 (exact: |l| < 2**21), so the codec's
one probability path turns them into the same frequencies everywhere.
"""
from __future__ import annotations

import numpy as np

from ..predict.protocol import Emit, whole
from . import ENGINE_VERSION, device, kernels, split
from .fixed import ACT
from .model import ExactModel, threshold_q
from .modelfile import ModelFile
from .primer import text_of as primer_text

LOGIT_SCALE = np.float32(1.0 / (1 << ACT))


class ExactPredictor:
    def __init__(self, model: ModelFile, g: np.ndarray | None, *,
                 exit_threshold: float | None = None, cascade_threshold: float | None = None,
                 adapt_rate: int = 0):
        cfg = model.build_config()
        self.model = model
        self.primer = primer_text(model)       # what the mixing stage learns first (or b"")
        self.engine = ExactModel(model.tensors, cfg, exit_threshold=exit_threshold,
                                 cascade_threshold=cascade_threshold, adapt_rate=adapt_rate)
        self.g = None if g is None else np.asarray(g, dtype=np.float32)
        gq = self.engine.globals_q(self.g, self.engine.d.d_globals)
        et = cfg.early_exit.exit_threshold if exit_threshold is None else exit_threshold
        ct = cfg.cascade.threshold if cascade_threshold is None else cascade_threshold
        self._fingerprint = (f"umoec.engine/{ENGINE_VERSION} model={model.hash} "
                             f"exit={threshold_q(et)} cascade={threshold_q(ct)} "
                             f"adapt={int(adapt_rate)} "
                             f"globals={','.join(map(str, gq.tolist()))}").encode()

    def fingerprint(self) -> bytes:
        return self._fingerprint

    def init_state(self, n_streams: int, foreseen: bool = False):
        """The engine's state, or a split.Split when the streams are shared by processes (the
        plan's threads, UMOEC_ENGINE_THREADS: split.parts_for), shared for a coding that
        foresees its steps (an encoder) when `foreseen`."""
        device.refresh()                       # UMOEC_ENGINE_DEVICE, read once per coding
        parts = split.parts_for(n_streams, kernels.threads())
        if parts > 1 and device.products() is None:
            try:
                return split.Split(self.engine, self.g, n_streams, parts, foreseen)
            except OSError:                    # no process could be started: one codes them all
                pass
        self.engine.set_threads(None)
        return self.engine.init_state(n_streams, self.g)

    def init_state_foreseen(self, n_streams: int):
        """init_state for an encoder, which will foresee every next step (protocol.start)."""
        return self.init_state(n_streams, foreseen=True)

    def step(self, prev_bytes: np.ndarray, state):
        return whole(self.step_parts, prev_bytes, state)

    def foresee(self, next_prev: np.ndarray, state) -> None:
        """With a split, its children compute that step while this process codes (protocol)."""
        if isinstance(state, split.Split):
            state.foresee(np.asarray(next_prev, dtype=np.int64))

    def step_parts(self, prev_bytes: np.ndarray, state, emit: Emit, meanwhile=None):
        """The step's logits slice by slice (predict/protocol.py's `parts`): with a split, this
        process's slice first, while the children compute theirs."""
        byte = np.asarray(prev_bytes, dtype=np.int64)
        scaled = lambda lo, hi, logits: emit(lo, hi, logits.astype(np.float32) * LOGIT_SCALE)  # noqa: E731
        if isinstance(state, split.Split):
            state.step_parts(byte, scaled, meanwhile)
            return state
        if meanwhile is not None:
            meanwhile()
        logits, state = self.engine.step(byte, state)
        scaled(0, len(byte), logits)
        return state
