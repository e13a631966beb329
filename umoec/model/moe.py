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
the N*k slots by expert and runs one matmul pair per non-empty expert.
"""
from __future__ import annotations

import torch
import torch.nn as nn

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

    def forward(self, u: torch.Tensor, valid: torch.Tensor | None = None, counts: bool = True):
        """u (N, C) -> (y (N, C), slot counts per expert (X,) over the valid (N,) tokens, as a
        float tensor without grad; None when counts=False)."""
        if u.shape[0] == 0:
            return u.clone(), u.new_zeros(self.n_routed)
        chosen, gate = self.route(u)                                     # (N, k)
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

    @torch.no_grad()
    def update_bias(self, load: torch.Tensor, bias_lr: float) -> None:
        """b_i += bias_lr * sign(mean(load) - load_i); load (X,) fractions of routed slots."""
        load = load.to(self.bias)
        self.bias.add_(bias_lr * torch.sign(load.mean() - load))
