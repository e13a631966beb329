"""Mixture-of-experts FFN with a sigmoid router, shared experts and loss-free balancing.

Glossary
  N  tokens (bytes, flattened)   C  d_model   F  d_ff (one expert's width)
  X  routed experts (n_routed)   k  top_k     s  router scores sigmoid(u . e_i), (N, X)
  b  balancing bias (X,), a buffer: it steers which experts are chosen, never the gate values

    chosen  = top-k of (s + b)                                (N, k)
    gate    = s[chosen] / sum(s[chosen])                      normalised over the chosen experts
    y       = shared(u) + sum_j gate_j * expert_{chosen_j}(u)

After each optimizer step the trainer calls `update_bias(load)`: b_i += bias_lr * sign(mean - load_i)
(DeepSeek-V3), where load is the fraction of routed slots each expert received.
Experts are separate 2-D matrices (so Muon can orthogonalise each); the routed computation sorts
the N*k slots by expert and runs one matmul pair per non-empty expert. The step form (a few hundred
tokens, `batched=True`) instead pads every expert's tokens to the largest expert's count and runs
one batched matmul pair over all experts at once: ~25% padding, but one call instead of 2X small
ones, and a batched matmul that a second thread can share (measured in docs/compress.md).
"""
from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F

from ..sizing import Dims
from .layers import FFN, LoraSeeds


class MoE(nn.Module):
    def __init__(self, d: Dims, depth: float, lora: LoraSeeds):
        super().__init__()
        self.n_routed, self.top_k = d.n_routed, d.top_k
        self.router = nn.Linear(d.d_model, d.n_routed, bias=False)
        nn.init.normal_(self.router.weight, std=d.d_model ** -0.5)
        self.register_buffer("bias", torch.zeros(d.n_routed))
        self.shared = (FFN(d.d_model, d.d_ff_shared, depth, lora.take(False, 2))
                       if d.n_shared else None)
        self.experts = nn.ModuleList(FFN(d.d_model, d.d_ff, depth, lora.take(True, 2))
                                     for _ in range(d.n_routed))

    def route(self, u: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(chosen experts (N, k), gate weights (N, k)) for tokens u (N, C)."""
        scores = torch.sigmoid(self.router(u))                           # (N, X)
        chosen = (scores.detach() + self.bias).topk(self.top_k, dim=-1).indices
        gate = scores.gather(1, chosen)
        return chosen, gate / gate.sum(-1, keepdim=True)

    def forward(self, u: torch.Tensor, valid: torch.Tensor | None = None, counts: bool = True,
                batched: bool = False):
        """u (N, C) -> (y (N, C), slot counts per expert (X,) over the valid (N,) tokens, as a
        float tensor without grad; None when counts=False). batched: the padded batched-matmul
        form of the routed experts (inference; adapters switched on fall back to the loop)."""
        if u.shape[0] == 0:
            return u.clone(), u.new_zeros(self.n_routed)
        chosen, gate = self.route(u)                                     # (N, k)
        if batched and not torch.is_grad_enabled() and not self.experts[0].w1.lora_on:
            y = self._routed_batched(u, chosen, gate)
        else:
            y = self._routed(u, chosen, gate)
        if self.shared is not None:
            y = y + self.shared(u)
        if not counts:
            return y, None
        weight = (u.new_ones(chosen.shape) if valid is None
                  else valid.to(u.dtype).unsqueeze(1).expand_as(chosen))
        load = u.new_zeros(self.n_routed).scatter_add_(0, chosen.reshape(-1), weight.reshape(-1))
        return y, load.detach()

    @torch.compiler.disable  # data-dependent sizes: always eager, also inside torch.compile
    def _routed(self, u: torch.Tensor, chosen: torch.Tensor, gate: torch.Tensor) -> torch.Tensor:
        """sum_j gate_j * expert_{chosen_j}(u): one matmul pair per non-empty expert."""
        slots = chosen.reshape(-1)                                       # (N*k,)
        order = slots.argsort(stable=True)                               # slots sorted by expert
        sizes = torch.bincount(slots, minlength=self.n_routed).tolist()
        xs = u.index_select(0, order // self.top_k)                      # (N*k, C)
        outs = [self.experts[e](part) for e, part in enumerate(xs.split(sizes)) if sizes[e]]
        ys = torch.cat(outs) * gate.reshape(-1)[order].unsqueeze(-1)     # (N*k, C), sorted
        y = torch.index_copy(torch.empty_like(ys), 0, order, ys)         # back to slot order
        return y.view(u.shape[0], self.top_k, -1).sum(1)                 # (N, C)

    def _stacked(self) -> tuple[torch.Tensor, torch.Tensor]:
        """Expert weights as (X, C, F) and (X, F, C), rebuilt only when a weight has changed
        (in place: its version counter moves; or replaced: another tensor object)."""
        first = self.experts[0].w1.weight
        mats = self.__dict__.get("_stack_mats")
        if mats is None or mats[0] is not first:
            mats = [m for e in self.experts for m in (e.w1.weight, e.w2.weight)]
            self.__dict__["_stack_mats"] = mats
        key = tuple(m._version for m in mats)
        if self.__dict__.get("_stack_key") != key:
            w1 = torch.stack([e.w1.weight.detach().t() for e in self.experts]).contiguous()
            w2 = torch.stack([e.w2.weight.detach().t() for e in self.experts]).contiguous()
            self.__dict__["_stack"], self.__dict__["_stack_key"] = (w1, w2), key
        return self.__dict__["_stack"]

    def _routed_batched(self, u: torch.Tensor, chosen: torch.Tensor,
                        gate: torch.Tensor) -> torch.Tensor:
        """`_routed` as two batched matmuls over experts, each expert's tokens padded to the
        largest count (padding rows are zeros and are never read back)."""
        N, C = u.shape
        slots = chosen.reshape(-1)                                       # (N*k,) expert ids
        onehot = F.one_hot(slots, self.n_routed)                         # (N*k, X)
        rank = (onehot.cumsum(0) - 1).gather(1, slots.unsqueeze(1)).squeeze(1)
        width = int(onehot.sum(0).max())                                 # largest expert's load
        w1, w2 = self._stacked()
        xs = u.new_zeros(self.n_routed, width, C)
        xs[slots, rank] = u.repeat_interleave(self.top_k, dim=0)
        ys = torch.bmm(F.silu(torch.bmm(xs, w1)), w2)[slots, rank]      # (N*k, C), slot order
        return (ys * gate.reshape(-1, 1)).view(N, self.top_k, C).sum(1)

    @torch.no_grad()
    def update_bias(self, load: torch.Tensor, bias_lr: float) -> None:
        """b_i += bias_lr * sign(mean(load) - load_i); load (X,) fractions of routed slots."""
        load = load.to(self.bias)
        self.bias.add_(bias_lr * torch.sign(load.mean() - load))
