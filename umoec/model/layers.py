"""Small shared layers: a Linear with an optional LoRA adapter, RMSNorm, a two-matrix FFN.

Glossary
  r      LoRA rank; the adapter adds (alpha / r) * B A to a weight W (out x in)
  A, B   adapter factors (r x in) and (out x r); B starts at zero, A from a seeded generator so
         encoder and decoder can rebuild identical adapters without storing them
"""
from __future__ import annotations

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Linear(nn.Module):
    """y = x W^T (+ b), plus (alpha / r) x A^T B^T when an adapter exists and is switched on."""

    def __init__(self, n_in: int, n_out: int, bias: bool = False, std: float | None = None,
                 lora_rank: int = 0, lora_alpha: float = 1.0, lora_seed: int = 0):
        super().__init__()
        self.n_in, self.n_out = n_in, n_out
        self.weight = nn.Parameter(torch.empty(n_out, n_in))
        nn.init.normal_(self.weight, std=n_in ** -0.5 if std is None else std)
        self.bias = nn.Parameter(torch.zeros(n_out)) if bias else None
        self.lora_on = False
        self.lora_rank = lora_rank
        if lora_rank:
            self.lora_scale = lora_alpha / lora_rank
            self.lora_seed = lora_seed
            self.lora_A = nn.Parameter(torch.empty(lora_rank, n_in))
            self.lora_B = nn.Parameter(torch.zeros(n_out, lora_rank))
            self.reset_lora()

    @torch.no_grad()
    def reset_lora(self) -> None:
        """A ~ U(-1/sqrt(in), 1/sqrt(in)) from this adapter's own seed, B = 0 (no effect yet)."""
        gen = torch.Generator().manual_seed(self.lora_seed)
        bound = 1.0 / math.sqrt(self.n_in)
        a = (torch.rand(self.lora_rank, self.n_in, generator=gen, dtype=torch.float64) * 2 - 1)
        self.lora_A.copy_(a * bound)
        self.lora_B.zero_()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.linear(x, self.weight, self.bias)
        if self.lora_on:
            y = y + F.linear(F.linear(x, self.lora_A), self.lora_B) * self.lora_scale
        return y


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:   # in the weight's precision (autocast)
        return F.rms_norm(x.to(self.weight.dtype), (x.shape[-1],), self.weight, self.eps)


class FFN(nn.Module):
    """x -> W2 silu(W1 x): one expert, the shared experts (as one wider FFN) or a dense FFN.
    W2 starts at std depth / sqrt(width) (depth < 1 keeps the residual stream's growth small)."""

    def __init__(self, d_model: int, width: int, depth: float, lora: dict | None = None):
        super().__init__()
        lora = lora or {}
        self.w1 = Linear(d_model, width, **_seeded(lora, 0))
        self.w2 = Linear(width, d_model, std=depth * width ** -0.5, **_seeded(lora, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:   # (..., C) -> (..., C)
        return self.w2(F.silu(self.w1(x)))


def _seeded(lora: dict, offset: int) -> dict:
    """Adapter arguments for the offset-th matrix of a layer (distinct seed per matrix)."""
    if not lora:
        return {}
    return {"lora_rank": lora["rank"], "lora_alpha": lora["alpha"],
            "lora_seed": lora["seed"] + offset}


class LoraSeeds:
    """Hands out adapter arguments with a fresh deterministic seed to each adapted layer."""

    def __init__(self, rank: int, alpha: float, enabled: bool, target_all: bool):
        self.rank, self.alpha = rank, alpha
        self.enabled, self.target_all = enabled, target_all
        self.next_seed = 1

    def take(self, routed: bool, n: int = 1) -> dict:
        """Arguments for a layer with n adapted matrices, or {} when it gets no adapter."""
        if not self.enabled or not (routed or self.target_all):
            return {}
        out = {"rank": self.rank, "alpha": self.alpha, "seed": self.next_seed}
        self.next_seed += n
        return out

    def linear(self, routed: bool = False) -> dict:
        """Keyword arguments for a single `Linear`."""
        return _seeded(self.take(routed), 0)
