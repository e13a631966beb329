"""What the trainer measures on hidden states every eval_every (Activations and Brain tabs).

activation_stats: distribution of the per-byte RMS of each block's output (mean, std and
percentiles); the RMS is what drifts when a block blows up or dies, and it sits near 1 for a
healthy pre-norm stack. hidden_states: up to 200 byte positions per block projected on the
first two principal components (SVD of the centred vectors).
"""
from __future__ import annotations

import torch

PERCENTILES = (1, 25, 50, 75, 99)
PCA_SAMPLES = 200


def activation_stats(hidden: torch.Tensor) -> dict[str, float]:
    """hidden: (B, T, C) -> mean, std, p1..p99 of the per-position RMS."""
    rms = hidden.detach().float().pow(2).mean(dim=-1).sqrt().flatten()
    q = torch.quantile(rms, torch.tensor([p / 100 for p in PERCENTILES]))
    out = {"mean": rms.mean().item(), "std": rms.std(unbiased=False).item()}
    out.update({f"p{p}": v.item() for p, v in zip(PERCENTILES, q, strict=True)})
    return out


def pca_points(hidden: torch.Tensor, n: int = PCA_SAMPLES) -> torch.Tensor:
    """hidden: (B, T, C) -> (min(n, B*T), 2) projections on the top-2 principal components.

    Positions are taken evenly spaced (deterministic), and each component's sign is fixed so the
    largest-magnitude coordinate is positive: snapshots at different steps stay comparable.
    """
    flat = hidden.detach().float().reshape(-1, hidden.shape[-1])
    idx = torch.linspace(0, flat.shape[0] - 1, min(n, flat.shape[0])).round().long()
    x = flat[idx]
    x = x - x.mean(dim=0, keepdim=True)
    if x.shape[0] < 2:
        return torch.zeros(x.shape[0], 2)
    _, _, vh = torch.linalg.svd(x, full_matrices=False)
    comps = vh[:2]
    proj = x @ comps.T
    signs = torch.sign(proj.gather(0, proj.abs().argmax(dim=0, keepdim=True)))
    proj = proj * torch.where(signs == 0, torch.ones_like(signs), signs)
    if proj.shape[1] < 2:
        proj = torch.cat([proj, torch.zeros(proj.shape[0], 2 - proj.shape[1])], dim=1)
    return proj
