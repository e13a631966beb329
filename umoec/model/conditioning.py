"""Conditioning on the global vector g (head.d_globals values the decoder knows from the header).

Glossary
  B  batch   T  time   C  d_model   G  d_globals (number of global values = global tokens)
  nh cross-attention heads, dh = C / nh

AdaLN-Zero (DiT), per conditioned block: [shift1, scale1, gate1, shift2, scale2, gate2] =
W g + b, each (B, C), with W and b initialised to zero, so a conditioned block starts as the
identity. g enters linearly (no SiLU: g holds raw header values, and SiLU would drop their sign).
    x += gate1 * mixer(LN(x) * (1 + scale1) + shift1);  x += gate2 * ffn(LN(x) * (1 + scale2) + shift2)

Cross-attention: global token j = g_j * w_j + b_j (w, b: (G, C)); every block attends from
RMSNorm(x) to the G tokens. Keys and values depend only on g, so the step form computes them once
per stream in `init_state`.
"""
from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F

from .layers import Linear, LoraSeeds, RMSNorm


class AdaLNZero(nn.Module):
    """g (B, G) -> modulation (B, 6, C), zero at initialisation."""

    def __init__(self, d_globals: int, d_model: int):
        super().__init__()
        self.proj = Linear(d_globals, 6 * d_model, bias=True, std=0.0)

    def forward(self, g: torch.Tensor) -> torch.Tensor:
        return self.proj(g).view(g.shape[0], 6, -1)


def modulate(x: torch.Tensor, shift: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    """LayerNorm without affine, then the AdaLN affine. x (B, T, C) or (B, C); shift/scale (B, C)."""
    if x.dim() == 3:
        shift, scale = shift.unsqueeze(1), scale.unsqueeze(1)
    return F.layer_norm(x, (x.shape[-1],), eps=1e-6) * (1 + scale) + shift


class GlobalTokens(nn.Module):
    """g (B, G) -> tokens (B, G, C): token j = g_j * weight_j + bias_j."""

    def __init__(self, d_globals: int, d_model: int):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(d_globals, d_model))
        self.bias = nn.Parameter(torch.randn(d_globals, d_model))

    def forward(self, g: torch.Tensor) -> torch.Tensor:
        return g.unsqueeze(-1) * self.weight + self.bias


class CrossAttention(nn.Module):
    def __init__(self, d_model: int, n_heads: int, depth: float, lora: LoraSeeds):
        super().__init__()
        self.nh, self.dh = n_heads, d_model // n_heads
        self.norm = RMSNorm(d_model)
        self.q = Linear(d_model, d_model, **lora.linear())
        self.k = Linear(d_model, d_model, **lora.linear())
        self.v = Linear(d_model, d_model, **lora.linear())
        self.o = Linear(d_model, d_model, std=depth * d_model ** -0.5, **lora.linear())

    def kv(self, tokens: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """tokens (B, G, C) -> keys, values (B, nh, G, dh)."""
        B, G, _ = tokens.shape
        k = self.k(tokens).view(B, G, self.nh, self.dh).transpose(1, 2)
        v = self.v(tokens).view(B, G, self.nh, self.dh).transpose(1, 2)
        return k, v

    def forward(self, x: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        """x (B, T, C) -> (B, T, C) attending to the global tokens."""
        B, T, C = x.shape
        q = self.q(self.norm(x)).view(B, T, self.nh, self.dh).transpose(1, 2)   # (B, nh, T, dh)
        att = torch.softmax(q @ k.transpose(-1, -2) * self.dh ** -0.5, dim=-1)  # (B, nh, T, G)
        return self.o((att @ v).transpose(1, 2).reshape(B, T, C))
