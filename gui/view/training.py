"""What the Training tab and the sidebar status show, from plain values (no Dash, no I/O)."""
from __future__ import annotations


def step_rate(recent) -> float | None:
    """Steps per second over the recent logged rows, or None if it cannot be measured."""
    if recent is None or len(recent) < 2:
        return None
    d_step = recent["step"].iloc[-1] - recent["step"].iloc[0]
    d_time = recent["elapsed_s"].iloc[-1] - recent["elapsed_s"].iloc[0]
    return float(d_step / d_time) if d_step > 0 and d_time > 0 else None


def fmt_duration(seconds: float) -> str:
    """"1h 02m 03s", or "2m 03s" under an hour."""
    h, rem = divmod(int(max(0, seconds)), 3600)
    m, s = divmod(rem, 60)
    return f"{h}h {m:02d}m {s:02d}s" if h else f"{m}m {s:02d}s"
