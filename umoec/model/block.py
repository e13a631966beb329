"""One residual block: SSM mixer, optional cross-attention, FFN (MoE or dense), optional MoD router.

Glossary
  B  batch   T  time   C  d_model   G  d_globals
  kind  "S" = SSM + MoE FFN, "D" = SSM + dense FFN of width d_ff * (top_k + n_shared)
  mod   the block is Mixture-of-Depths routed: a scalar router r = w . rmsnorm(x) + b picks
        the bytes it processes; processed bytes get x + sigmoid(r) * delta, the others skip it
  valid (B, T) bool, the real (not padding) positions of a compacted sequence; padding is
        computed like any byte (its results are dropped) but not counted in the MoE load

The block returns its residual *delta* (not x + delta) so that MoD can scale it:
    delta  = d_mix + d_xattn + d_ffn, where
    d_mix  = mixer(norm1(x))                      [* gate1, with AdaLN-Zero]
    d_xattn= xattn(x + d_mix)                     (when conditioning.cross_attn)
    d_ffn  = ffn(norm2(x + d_mix + d_xattn))      [* gate2, with AdaLN-Zero]
"""
from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F

from ..sizing import Dims
from .conditioning import AdaLNZero, CrossAttention, modulate
from .layers import FFN, LoraSeeds, RMSNorm
from .moe import MoE
from .ssm import SSMMixer


class Block(nn.Module):
    def __init__(self, d: Dims, index: int, lora: LoraSeeds):
        super().__init__()
        C = d.d_model
        depth = (2 * len(d.kinds)) ** -0.5   # residual output projections start this much smaller
        self.index, self.kind = index, d.kinds[index]
        self.ada = AdaLNZero(d.d_globals, C) if index in d.ada_blocks else None
        self.norm1 = None if self.ada is not None else RMSNorm(C)
        self.norm2 = None if self.ada is not None else RMSNorm(C)
        self.mixer = SSMMixer(d, depth, lora)
        self.xattn = CrossAttention(C, d.xattn_heads, depth, lora) if d.cross_attn else None
        if self.kind == "S":
            self.ffn = MoE(d, depth, lora)
        else:
            self.ffn = FFN(C, d.d_ff_dense, depth, lora.take(False, 2))
        self.router = nn.Linear(C, 1) if d.mod_blocks[index] else None
        if self.router is not None:
            nn.init.normal_(self.router.weight, std=C ** -0.5)
            nn.init.zeros_(self.router.bias)

    # -- pieces shared by both forms -------------------------------------------------------------
    def route_score(self, x: torch.Tensor) -> torch.Tensor:
        """MoD router score r (..., ) from x (..., C); processed at inference when r > 0."""
        return self.router(F.rms_norm(x, (x.shape[-1],), eps=1e-5)).squeeze(-1)

    def _norm(self, x, mod, which: int):
        if mod is None:
            return (self.norm1 if which == 0 else self.norm2)(x)
        return modulate(x, mod[:, 3 * which], mod[:, 3 * which + 1])

    @staticmethod
    def _gate(y, mod, which: int):
        if mod is None:
            return y
        gate = mod[:, 3 * which + 2]
        return y * (gate.unsqueeze(1) if y.dim() == 3 else gate)

    def _ffn(self, u: torch.Tensor, valid: torch.Tensor | None = None, counts: bool = True,
             batched: bool = False):
        """u (N, C) tokens -> (y (N, C), MoE slot counts over valid (N,) tokens, or None)."""
        if self.kind == "S":
            return self.ffn(u, valid, counts, batched)
        return self.ffn(u), None

    # -- parallel form ---------------------------------------------------------------------------
    def forward(self, x: torch.Tensor, mod: torch.Tensor | None = None, kv=None,
                valid: torch.Tensor | None = None):
        """x (B, T, C) -> (delta (B, T, C), MoE counts (X,) or None); mod (B, 6, C) or None."""
        delta = self._gate(self.mixer(self._norm(x, mod, 0)), mod, 0)
        if self.xattn is not None:
            delta = delta + self.xattn(x + delta, *kv)
        u = self._norm(x + delta, mod, 1)                               # (B, T, C)
        y, counts = self._ffn(u.reshape(-1, u.shape[-1]),
                              None if valid is None else valid.reshape(-1))
        return delta + self._gate(y.view_as(u), mod, 1), counts

    # -- recurrent form --------------------------------------------------------------------------
    def step(self, x: torch.Tensor, conv: torch.Tensor, ssm: torch.Tensor, mod=None, kv=None,
             rows: torch.Tensor | None = None):
        """x (B, C) -> (delta (B, C), new conv state); ssm (B, N, H, P) updated in place.
        rows (R,): x, mod and kv hold only these streams of the states (see SSMMixer.step)."""
        mixed, conv = self.mixer.step(self._norm(x, mod, 0), conv, ssm, rows)
        delta = self._gate(mixed, mod, 0)
        if self.xattn is not None:
            delta = delta + self.xattn((x + delta).unsqueeze(1), *kv).squeeze(1)
        y, _ = self._ffn(self._norm(x + delta, mod, 1), counts=False, batched=True)
        return delta + self._gate(y, mod, 1), conv
