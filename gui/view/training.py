"""What the Training tab and the sidebar status show, from plain values (no Dash, no I/O)."""
from __future__ import annotations


def step_rate(recent) -> float | None:
    """Steps per second over the recent logged rows, or None if it cannot be measured."""
    if recent is None or len(recent) < 2:
        return None
    d_step = recent["step"].iloc[-1] - recent["step"].iloc[0]
    d_time = recent["elapsed_s"].iloc[-1] - recent["elapsed_s"].iloc[0]
    return float(d_step / d_time) if d_step > 0 and d_time > 0 else None
