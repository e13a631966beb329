"""Optimizers: Muon for 2-D hidden weight matrices, AdamW for everything else (config sections
optimizer.muon and optimizer.adamw), both scaled by one schedule multiplier each step."""
from __future__ import annotations

import torch

from ..config import Config


def build_optimizers(model, cfg: Config) -> list[torch.optim.Optimizer]:
    """[Muon, AdamW] over the model's parameter groups (Muon omitted if it has no weights).

    Muon uses the same decoupled weight decay as AdamW's decayed group; norms, biases and the
    SSM's A_log / D are never decayed (the model's `param_groups()` decides the split).
    """
    muon_params, decay, no_decay = model.param_groups()
    o = cfg.optimizer
    opts: list[torch.optim.Optimizer] = []
    if muon_params:
        opts.append(torch.optim.Muon(muon_params, lr=o.muon.lr, momentum=o.muon.momentum,
                                     nesterov=True, ns_steps=o.muon.ns_steps,
                                     weight_decay=o.adamw.weight_decay))
    groups = [{"params": decay, "weight_decay": o.adamw.weight_decay},
              {"params": no_decay, "weight_decay": 0.0}]
    opts.append(torch.optim.AdamW([g for g in groups if g["params"]], lr=o.adamw.lr,
                                  betas=tuple(o.adamw.betas)))
    for opt in opts:
        for group in opt.param_groups:
            group["peak_lr"] = group["lr"]
    return opts


def set_lr(optimizers: list[torch.optim.Optimizer], multiplier: float) -> float:
    """Scale every group's peak lr; returns the AdamW lr (what the logs report)."""
    for opt in optimizers:
        for group in opt.param_groups:
            group["lr"] = group["peak_lr"] * multiplier
    return optimizers[-1].param_groups[0]["lr"]
