"""Which bytes a block processes: MoD top-capacity selection and sequence compaction.

Glossary
  B  batch   T  time   C  d_model   Tm  longest compacted row
  mask (B, T) bool: the bytes a block processes (MoD choice, minus exited / cascade-alone bytes)

A skipped byte leaves the block's recurrent state untouched, so in the parallel form a block runs
on each row's processed bytes gathered in time order (`compact`), padded at the end with a dummy
position T that is dropped again on the way back (`scatter_rows`). Padding only ever follows the
real bytes of a row, so the causal mixer never lets it influence them.
"""
from __future__ import annotations

import math

import torch


def compact(mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """mask (B, T) -> idx (B, Tm) positions in time order (T = padding), valid (B, Tm)."""
    _B, T = mask.shape
    counts = mask.sum(1)
    tm = int(counts.max())
    order = (~mask).to(torch.int8).argsort(dim=1, stable=True)[:, :tm]   # processed first
    valid = torch.arange(tm, device=mask.device) < counts.unsqueeze(1)
    return torch.where(valid, order, T), valid


def gather_rows(h: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
    """h (B, T, C), idx (B, Tm) with T meaning padding -> (B, Tm, C), zeros at padding."""
    padded = torch.cat([h, h.new_zeros(h.shape[0], 1, h.shape[2])], dim=1)
    return padded.gather(1, idx.unsqueeze(-1).expand(-1, -1, h.shape[2]))


def scatter_rows(h: torch.Tensor, idx: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
    """h with rows idx replaced by values (B, Tm, C); padding lands on a dropped extra row."""
    B, T, C = h.shape
    padded = torch.cat([h, h.new_zeros(B, 1, C)], dim=1)
    return padded.scatter(1, idx.unsqueeze(-1).expand(-1, -1, C), values)[:, :T]


def gather_values(v: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
    """v (B, T) -> (B, Tm) at idx (padding reads 0)."""
    return torch.cat([v, v.new_zeros(v.shape[0], 1)], dim=1).gather(1, idx)


def mod_topk(score: torch.Tensor, alive: torch.Tensor, capacity: float) -> torch.Tensor:
    """Training rule: per row the top ceil(capacity * T) scores among alive bytes -> (B, T) bool."""
    _B, T = score.shape
    k = min(T, math.ceil(capacity * T))
    masked = score.detach().masked_fill(~alive, float("-inf"))
    chosen = torch.zeros_like(alive)
    chosen.scatter_(1, masked.topk(k, dim=1).indices, True)
    return chosen & alive
