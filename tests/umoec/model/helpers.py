"""Small configs of every tier's component mix, random inputs, and a step-form runner."""
from __future__ import annotations

import torch

from umoec import config as C
from umoec.model import build_model

# Shrunk widths; every switch, pattern, exit, conditioning and patch setting stays the tier's.
SHRINK = ["model.d_model=32", "model.d_state=4", "moe.d_ff=16", "cascade.d_hidden=8"]
TIER_EXTRA = {"tier1_micro": ["moe.n_routed=4"], "tier2_small": ["moe.n_routed=4"],
              "tier3_base": ["moe.n_routed=6"]}


def tiny_cfg(tier: str = "tier1_micro", *overrides: str) -> C.Config:
    return C.load_preset(tier, SHRINK + TIER_EXTRA[tier] + list(overrides))


def tiny_model(tier: str = "tier1_micro", *overrides: str, seed: int = 0):
    torch.manual_seed(seed)
    return build_model(tiny_cfg(tier, *overrides))


def sample_bytes(batch: int, length: int, seed: int = 0) -> torch.Tensor:
    """Rows of mixed character: small-alphabet noise (contexts repeat, so the cascade has
    predictions), a repeated phrase, and uniform bytes."""
    gen = torch.Generator().manual_seed(seed)
    rows = []
    phrase = torch.tensor(list(b"the cat sat on the mat. "), dtype=torch.long)
    for b in range(batch):
        kind = b % 3
        if kind == 0:
            rows.append(torch.randint(97, 101, (length,), generator=gen))
        elif kind == 1:
            rows.append(phrase.repeat(length // len(phrase) + 1)[:length])
        else:
            rows.append(torch.randint(0, 256, (length,), generator=gen))
    return torch.stack(rows)


def run_steps(model, x: torch.Tensor, g: torch.Tensor | None = None) -> torch.Tensor:
    """Step form over x (B, T) from an empty state -> logits (B, T, 256)."""
    state = model.init_state(x.shape[0], g)
    out = []
    for t in range(x.shape[1]):
        logits, state = model.step(x[:, t], state)
        out.append(logits)
    return torch.stack(out, dim=1)


def threshold_between(values: torch.Tensor, q: float) -> float:
    """A threshold near quantile q that sits in the widest gap between neighbouring values
    (so float noise between the two forms cannot move a value across it)."""
    v = values.flatten().double().sort().values
    n = v.numel()
    lo, hi = max(0, int((q - 0.15) * n)), min(n - 1, int((q + 0.15) * n))
    gaps = v[lo + 1:hi + 1] - v[lo:hi]
    i = lo + int(gaps.argmax())
    return float((v[i] + v[i + 1]) / 2)
