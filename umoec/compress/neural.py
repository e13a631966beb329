"""The trained model as the codec's predictor: checkpoint + profile -> deterministic step form.

Encoder and decoder both build the predictor here, from the same inputs: the checkpoint's
weights, the effective config (the checkpoint's network + the profile's inference settings +
entropy/lora settings) and the global vector of the input (stored in the .umc header). They run
the model's `step` in fp32 on the CPU with the thread count recorded in the header, so the
logits, and therefore the frequencies, are bit-identical on both sides.
"""
from __future__ import annotations

import base64
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from .. import config as C
from ..data import IGNORE, document_features
from ..predict.match import MatchMixer, MatchSettings
from ..predict.torch_step import StepModelPredictor, model_fingerprint
from ..train import checkpoint as ckpt
from .profiles import Profile

# Settings a profile or the coder may change at inference without touching the weights.
INFERENCE_KEYS = ("lora.", "early_exit.exit_threshold", "cascade.threshold")


class ModelLoadError(RuntimeError):
    """The checkpoint/config pair cannot drive the codec; the message says why."""


@dataclass
class LoadedModel:
    model: torch.nn.Module
    cfg: C.Config            # effective config (profile applied)
    step: int                # training step of the checkpoint
    checkpoint: Path


def effective_config(base: C.Config, profile: Profile) -> C.Config:
    """The checkpoint's config with the profile's inference-time settings applied."""
    return C.build(C.apply_overrides(C.to_dict(base), profile.overrides()), f"profile {profile.name}")


def load_model(checkpoint: Path, profile: Profile,
               settings: C.Config | dict | None = None) -> LoadedModel:
    """Build the network of `checkpoint`, load its weights, apply the profile.

    settings: where the entropy.* and lora.* (adaptation) settings come from: a user Config
    (whose network sections must equal the checkpoint's) or the two sections as dicts (as a .umc
    header stores them); default: the checkpoint's own.
    """
    state = ckpt.load(checkpoint)
    base = ckpt.checkpoint_config(state, str(checkpoint))
    if isinstance(settings, C.Config):
        diffs = [d for d in ckpt.arch_differences(settings, base)
                 if not d.startswith(INFERENCE_KEYS)]
        if diffs:
            raise ModelLoadError(f"--config does not describe the network of {checkpoint}: "
                                 + "; ".join(diffs[:4]))
        settings = C.to_dict(settings)
    if settings is not None:
        if not all(isinstance(settings.get(k), dict) for k in ("entropy", "lora")):
            raise ModelLoadError("the entropy/lora settings are not mappings of keys to values")
        merged = C.to_dict(base)
        merged["entropy"] = settings["entropy"]
        merged["lora"] = {**settings["lora"], "enabled": base.lora.enabled}
        try:
            base = C.build(merged, "compression settings")
        except C.ConfigError as exc:
            raise ModelLoadError(str(exc)) from None
    cfg = effective_config(base, profile)
    torch.manual_seed(cfg.data.seed)  # LoRA A factors are seeded: same start on both sides
    from ..model import build_model
    model = build_model(cfg)
    missing, unexpected = model.load_state_dict(state["model"], strict=False)
    bad = [k for k in missing if "lora_" not in k] + list(unexpected)
    if bad:
        raise ModelLoadError(f"checkpoint {checkpoint} does not fit the network: "
                             f"{', '.join(bad[:5])}")
    model.eval()
    return LoadedModel(model, cfg, int(state["step"]), Path(checkpoint))


def encode_globals(g: np.ndarray) -> str:
    return base64.b64encode(np.asarray(g, dtype="<f4").tobytes()).decode("ascii")


def decode_globals(text: str, d_globals: int) -> np.ndarray:
    raw = base64.b64decode(text.encode("ascii"), validate=True)
    if len(raw) != 4 * d_globals:
        raise ValueError(f"header holds {len(raw) // 4} global values, the model needs {d_globals}")
    return np.frombuffer(raw, dtype="<f4").copy()


def globals_for(data: bytes, cfg: C.Config) -> np.ndarray:
    return document_features(data, cfg.head.d_globals)


class NeuralPredictor(StepModelPredictor):
    """StepModelPredictor with the global vector and (optionally) online LoRA adaptation."""

    def __init__(self, loaded: LoadedModel, g: np.ndarray, threads: int):
        self.loaded, self.g = loaded, np.asarray(g, dtype=np.float32)
        cfg, model = loaded.cfg, loaded.model
        fp = model_fingerprint(model, C.to_dict(cfg), threads=threads,
                               extra={"globals": encode_globals(self.g)})
        super().__init__(model, fp)
        self.adaptive = cfg.lora.enabled and bool(model.lora_parameters())
        if self.adaptive:
            for p in model.parameters():  # only the adapters learn while coding
                p.requires_grad_(False)
            for p in model.lora_parameters():
                p.requires_grad_(True)
            model.reset_lora()
            model.set_lora(True)
            self._opt = torch.optim.SGD(model.lora_parameters(), lr=cfg.lora.adapt_lr)
            self.adapt = self._adapt

    def init_state(self, n_streams: int):
        g = torch.from_numpy(self.g).unsqueeze(0).expand(n_streams, -1).contiguous()
        with torch.no_grad():
            return self.model.init_state(n_streams, g)

    def _adapt(self, recent: list[bytes], state):
        """adapt_steps SGD steps of the LoRA factors on the bytes just coded (both sides alike)."""
        rows = [r for r in recent if len(r) >= 2]
        if not rows:
            return state
        width = max(len(r) for r in rows) - 1
        x = torch.zeros(len(rows), width, dtype=torch.long)
        y = torch.full((len(rows), width), IGNORE, dtype=torch.long)
        for i, r in enumerate(rows):
            t = torch.frombuffer(bytearray(r), dtype=torch.uint8).long()
            x[i, :len(r) - 1], y[i, :len(r) - 1] = t[:-1], t[1:]
        g = torch.from_numpy(self.g).unsqueeze(0).expand(len(rows), -1)
        for _ in range(self.loaded.cfg.lora.adapt_steps):
            out = self.model(x, g, targets=y)
            self._opt.zero_grad(set_to_none=True)
            out.head_losses["final"].backward()
            self._opt.step()
        self.model.zero_grad(set_to_none=True)
        return state


def build_predictor(loaded: LoadedModel, g: np.ndarray, threads: int):
    """What encoder and decoder both code with: the model, plus the match model when
    `entropy.match_min_len` > 0 (umoec/predict/match.py)."""
    predictor = NeuralPredictor(loaded, g, threads)
    m = loaded.cfg.entropy.match_min_len
    return MatchMixer(predictor, MatchSettings.standard(m)) if m else predictor
