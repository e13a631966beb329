"""Learning-rate schedule: linear warmup, then cosine decay to MIN_LR_RATIO or constant.

A pure function of the step, shared by the trainer, the simulator and the cockpit's preview,
so the preview is the schedule the run will use. Both optimizers scale by the same multiplier.
"""
from __future__ import annotations

import math

MIN_LR_RATIO = 0.1  # cosine decays to 10% of the peak


def lr_multiplier(step: int, total_steps: int, warmup_steps: int, cosine: bool) -> float:
    """Multiplier in (0, 1] applied to the peak lr at 0-based `step`."""
    if warmup_steps > 0 and step < warmup_steps:
        return (step + 1) / warmup_steps
    if not cosine:
        return 1.0
    span = max(1, total_steps - warmup_steps)
    progress = min(1.0, max(0.0, (step - warmup_steps) / span))
    return MIN_LR_RATIO + (1.0 - MIN_LR_RATIO) * 0.5 * (1.0 + math.cos(math.pi * progress))


def lr_curve(total_steps: int, warmup_steps: int, cosine: bool, peak: float,
             points: int = 200) -> tuple[list[int], list[float]]:
    """(steps, lrs) sampled evenly over the run, for a preview chart."""
    n = max(2, min(points, total_steps))
    steps = sorted({round(i * (total_steps - 1) / (n - 1)) for i in range(n)}
                   | ({warmup_steps - 1, warmup_steps} if 0 < warmup_steps < total_steps else set()))
    return steps, [peak * lr_multiplier(s, total_steps, warmup_steps, cosine) for s in steps]
