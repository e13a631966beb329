"""Output heads: the final next-byte head, early-exit heads and multi-token-prediction heads.

Glossary
  B  batch   T  time   C  d_model   V  256 bytes

All heads share one unembedding W_out (C -> V) (LayerSkip-style sharing):
  final       logits = W_out rmsnorm_f(h_last)
  exit after block b   logits = W_out rmsnorm_b(h_b)          (own norm per exit)
  MTP head k (k = 1 .. primary-1) predicts byte t+1+k: logits = W_out rmsnorm_k(W_k h_last)
Exit confidence is p_top1 - p_top2 of the exit head's softmax.
"""
from __future__ import annotations

import torch
import torch.nn as nn

from ..sizing import VOCAB, Dims
from .layers import Linear, RMSNorm


class MTPHead(nn.Module):
    def __init__(self, d_model: int):
        super().__init__()
        self.proj = Linear(d_model, d_model)
        self.norm = RMSNorm(d_model)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        return self.norm(self.proj(h))


class Heads(nn.Module):
    def __init__(self, d: Dims):
        super().__init__()
        C = d.d_model
        self.final_norm = RMSNorm(C)
        self.unembed = Linear(C, VOCAB, std=0.02)
        self.exit_norms = nn.ModuleDict({str(b): RMSNorm(C) for b in d.exit_blocks})
        self.mtp = nn.ModuleList(MTPHead(C) for _ in range(d.n_mtp))

    def final(self, h: torch.Tensor) -> torch.Tensor:
        return self.unembed(self.final_norm(h))

    def exit(self, block: int, h: torch.Tensor) -> torch.Tensor:
        return self.unembed(self.exit_norms[str(block)](h))

    def mtp_logits(self, k: int, h: torch.Tensor) -> torch.Tensor:
        """Logits of byte t+1+k (k >= 1) at every position."""
        return self.unembed(self.mtp[k - 1](h))


def confidence(logits: torch.Tensor) -> torch.Tensor:
    """p_top1 - p_top2 of softmax(logits) over the last axis (no gradient)."""
    top = torch.softmax(logits.detach(), dim=-1).topk(2, dim=-1).values
    return top[..., 0] - top[..., 1]
