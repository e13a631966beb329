"""Loss terms: next-byte cross-entropy with ignored positions, MTP weights, the total.

    loss = ce_weight * CE(final) + exit_loss_weight * sum_b CE(exit_b)
         + loss.mtp_weight * MTP + CASCADE_LOSS_WEIGHT * CE(cascade alone)
         + MOD_AUX_WEIGHT * mean_b BCE(mod router_b)
    MTP  = sum_k w_k CE(mtp_k) / sum_k w_k,  w_k = patches.mtp_weight ** k   (0 if all w_k = 0)
Every CE is a mean over positions whose target is not -1, in nats per byte.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

IGNORE = -1
MOD_AUX_WEIGHT = 0.1       # weight of the MoD router's BCE auxiliary loss (no config field)
CASCADE_LOSS_WEIGHT = 0.1  # weight of the cascade-alone cross-entropy (no config field)


def cross_entropy(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Mean CE over targets != -1 of logits (..., V); 0 (with grad) when there are none."""
    flat_t = targets.reshape(-1)
    if not bool((flat_t != IGNORE).any()):
        return logits.sum() * 0.0
    flat = logits.reshape(-1, logits.shape[-1])
    if flat.dtype in (torch.float16, torch.bfloat16):   # autocast: the loss in fp32
        flat = flat.float()
    return F.cross_entropy(flat, flat_t, ignore_index=IGNORE)


def shifted_targets(targets: torch.Tensor, k: int, keep: torch.Tensor) -> torch.Tensor:
    """Targets of the byte k further ahead: position t gets targets[t + k] (-1 past the end or
    where keep (B, T) is False)."""
    B, T = targets.shape
    out = targets.new_full((B, T), IGNORE)
    out[:, :T - k] = targets[:, k:]
    return out.masked_fill(~keep, IGNORE)


def mtp_weights(n: int, decay: float) -> list[float]:
    """Normalised weights of the n MTP heads: decay**k / sum (all zero if decay == 0)."""
    w = [decay ** k for k in range(1, n + 1)]
    total = sum(w)
    return [x / total for x in w] if total > 0 else [0.0] * n
