"""Compression profiles: named trade-offs between speed and bits per byte.

A profile sets the number of parallel streams (more streams = more bytes per model call, but each
stream starts cold and sees less context) and the model's inference-time settings: early exits
(skip later blocks when an exit head is confident), the cascade (use the cheap context model alone
when it is confident), online LoRA adaptation and how many threads it may use (threads.py
decides from the machine's load; the count is recorded). The profile's name is stored in the .umc header;
the decoder applies the same settings. Measured numbers: docs/compress.md.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Profile:
    name: str
    streams: int
    exit_threshold: float | None     # None: keep the checkpoint's early_exit.exit_threshold
    cascade_threshold: float | None  # None: keep cascade.threshold
    adapt: bool                      # online LoRA adaptation (lora.* of the config)
    threads: int                     # torch threads at most, when that many cores are idle
    description: str

    def overrides(self) -> list[str]:
        out = []
        if self.exit_threshold is not None:
            out.append(f"early_exit.exit_threshold={self.exit_threshold}")
        if self.cascade_threshold is not None:
            out.append(f"cascade.threshold={self.cascade_threshold}")
        out.append(f"lora.enabled={'true' if self.adapt else 'false'}")
        return out


PROFILES = {
    "turbo": Profile("turbo", 256, None, None, False, 2,
                     "256 streams, early exits and cascade shortcuts as trained, two threads "
                     "when two cores are idle: fastest"),
    "fast": Profile("fast", 64, None, 1.0, False, 1,
                    "64 streams, early exits as trained, cascade never used alone"),
    "balanced": Profile("balanced", 16, 1.0, 1.0, True, 1,
                        "16 streams, every byte through the whole model, online LoRA adaptation: "
                        "best bpb, slowest"),
}


def get(name: str) -> Profile:
    from ..cli import UserError
    if name not in PROFILES:
        raise UserError(f"unknown profile {name!r}; choose one of {', '.join(PROFILES)}")
    return PROFILES[name]
