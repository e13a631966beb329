"""Byte embedding plus causal multi-scale patch embeddings (patches.scales).

Glossary
  B  batch   T  time   C  d_model   P  one patch scale (bytes per patch)

Patches of size P are aligned to the start of the stream: patch j holds bytes [jP, (j+1)P).
At position t (having read byte x_t) the last *complete* patch is j = (t+1) // P - 1; its pooled
embedding mean_{s in patch j} e_P[x_s] (one table e_P (256, C) per scale) is added to the byte's
own embedding. Nothing after x_t is used, so the form is causal, and the step form keeps per
scale only a running sum of the current patch and the last complete patch's mean.
"""
from __future__ import annotations

import torch
import torch.nn as nn

from ..sizing import VOCAB


class ByteEmbedding(nn.Module):
    def __init__(self, d_model: int, scales: tuple):
        super().__init__()
        self.scales = tuple(scales)
        self.byte = nn.Embedding(VOCAB, d_model)
        self.patch = nn.ModuleList(nn.Embedding(VOCAB, d_model) for _ in self.scales)
        for emb in [self.byte, *self.patch]:
            nn.init.normal_(emb.weight, std=1.0)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x (B, T) bytes -> (B, T, C)."""
        h = self.byte(x)
        B, T = x.shape
        for P, emb in zip(self.scales, self.patch, strict=True):
            n = T // P                                                   # complete patches
            if n == 0:
                continue
            e = emb(x[:, :n * P]).view(B, n, P, -1)
            pooled = torch.cat([h.new_zeros(B, 1, h.shape[-1]), e.sum(2) / P], dim=1)
            which = (torch.arange(T, device=x.device) + 1) // P          # 0 = no patch yet
            h = h + pooled[:, which]                                     # (B, T, C)
        return h

    def init_state(self, batch: int, like: torch.Tensor) -> dict:
        C = self.byte.weight.shape[1]
        return {"acc": [like.new_zeros(batch, C) for _ in self.scales],
                "last": [like.new_zeros(batch, C) for _ in self.scales]}

    def step(self, byte: torch.Tensor, state: dict, t: int) -> torch.Tensor:
        """byte (B,) at position t -> (B, C); updates the patch sums in state."""
        h = self.byte(byte)
        for s, (P, emb) in enumerate(zip(self.scales, self.patch, strict=True)):
            state["acc"][s] = state["acc"][s] + emb(byte)
            if (t + 1) % P == 0:
                state["last"][s] = state["acc"][s] / P
                state["acc"][s] = torch.zeros_like(state["acc"][s])
            h = h + state["last"][s]
        return h
