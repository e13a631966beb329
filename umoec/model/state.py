"""Recurrent state of B streams for the step form (`model.init_state` / `model.step`)."""
from __future__ import annotations

from dataclasses import dataclass, field

import torch


@dataclass
class ModelState:
    """Everything the step form carries from one byte to the next, for B streams in lockstep.

    t        bytes consumed so far (shared by all streams)
    embed    patch sums: {"acc": [(B, C)] per scale, "last": [(B, C)] per scale}
    conv     per block (B, d_conv - 1, E + 2N): the last pre-conv inputs of the mixer
    ssm      per block (B, N, H, P): the SSM state
    mods     per AdaLN block (B, 6, C): modulation computed once from g
    kv       per block (keys, values) (B, nh, G, dh) of the global tokens (cross_attn only)
    cascade  integer context tables (see cascade.py), None when the cascade is off
    `model.step` updates the state in place and returns it; `clone()` keeps a copy.
    """

    t: int
    embed: dict
    conv: list
    ssm: list
    mods: dict = field(default_factory=dict)
    kv: dict = field(default_factory=dict)
    cascade: dict | None = None

    @property
    def batch_size(self) -> int:
        return self.ssm[0].shape[0]

    def clone(self) -> ModelState:
        def copy(v):
            if isinstance(v, torch.Tensor):
                return v.clone()
            if isinstance(v, dict):
                return {k: copy(x) for k, x in v.items()}
            if isinstance(v, (list, tuple)):
                return type(v)(copy(x) for x in v)
            return v
        return ModelState(self.t, copy(self.embed), copy(self.conv), copy(self.ssm),
                          copy(self.mods), copy(self.kv), copy(self.cascade))
