"""What one parallel forward pass returns (the trainer logs most of it)."""
from __future__ import annotations

from dataclasses import dataclass, field

import torch


@dataclass
class ModelOutput:
    """Fields of `model(x, g, targets)`; dict keys are block indices (0-based) or head names.

    logits                 (B, T, 256) next-byte logits the coder uses (exits and cascade applied)
    loss                   scalar training loss, None without targets
    head_losses            nats/byte: "final", "exit_<b>", "mtp_<k>", "cascade"
    aux_losses             "mod_<b>": BCE of the MoD router against its top-capacity choice
    moe_load               (n_routed,) fraction of routed slots per expert (sums to 1; 0s if idle)
    moe_bias               (n_routed,) balancing bias used in this pass
    mod_fraction           fraction of bytes the MoD block processed under this pass's rule
    mod_fraction_inference fraction the causal threshold rule (r > 0) would process
    exit_fraction          fraction of bytes that left at the exit after block b
    cascade_fraction       fraction of bytes coded by the cascade alone (None: cascade off)
    hidden                 (B, T, C) output of every block when return_hidden=True
    mode                   "train" (MoD top-capacity) or "infer" (the step form's rules)
    """

    logits: torch.Tensor
    loss: torch.Tensor | None = None
    head_losses: dict = field(default_factory=dict)
    aux_losses: dict = field(default_factory=dict)
    moe_load: dict = field(default_factory=dict)
    moe_bias: dict = field(default_factory=dict)
    mod_fraction: dict = field(default_factory=dict)
    mod_fraction_inference: dict = field(default_factory=dict)
    exit_fraction: dict = field(default_factory=dict)
    cascade_fraction: float | None = None
    hidden: list | None = None
    mode: str = "train"
