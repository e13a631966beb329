"""Compression profiles: named trade-offs between speed and bits per byte.

A profile sets the number of parallel streams (more streams = more bytes per model call, but each
stream starts cold and sees less context; small inputs get fewer) and the model's inference-time
settings: early exits (skip later blocks when an exit head is confident), the cascade (use the
cheap context model alone when it is confident), online adaptation and how many threads it may
use (threads.py decides from the machine's load; results never depend on it), and the coder:
every profile codes through the context-mixing stage (codec/cm.py), whose context tables, shared
by all streams, win back what the streams' cold starts cost; `cm` runs that stage alone, with no
network. The profile's name, the stream count and the coder are stored in the .umc header; the
decoder applies the same settings (files written with the rANS coder still decode).
Measured numbers: docs/compress.md.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import UserError

ADAPT_RATE = 32    # measured with the default model on held-out Python, match model off (docs/engine.md):
                   # 16 streams 1.804 -> 1.567 bpb, 64 streams 1.766 -> 1.634; 256 streams only
                   # 1.927 -> 1.876, not worth turbo's time


FRAME_BYTES = 8 << 20   # input bytes per frame (codec/frames.py): what compress or decompress
                        # holds at a time, and the unit of parallel work; each frame starts cold


@dataclass(frozen=True)
class Profile:
    name: str
    streams: int
    exit_threshold: float | None     # None: keep the checkpoint's early_exit.exit_threshold
    cascade_threshold: float | None  # None: keep cascade.threshold
    adapt_rate: int                  # online adaptation step while coding, 0 = off (engine/adapt.py)
    threads: int                     # cores at most, when that many are idle: processes sharing
                                     # the streams (engine/split.py), or the SSM mixer's threads
                                     # where they are too few to split (6 each at least)
    description: str
    min_stream_bytes: int = 256      # fewer streams on small inputs: each holds at least this
    coder: str = ""                  # "cm": the context-mixing stage (codec/cm.py); "": entropy.coder
    network: bool = True             # False: no model at all (the mixing stage alone)
    frame_bytes: int = FRAME_BYTES   # an input larger than this is coded in independent frames

    def streams_for(self, size: int) -> int:
        """Streams for an input of `size` bytes: a stream starts with no context, so a small
        file in many streams would be coded mostly cold."""
        return max(1, min(self.streams, size // self.min_stream_bytes))

    def overrides(self) -> list[str]:
        out = []
        if self.exit_threshold is not None:
            out.append(f"early_exit.exit_threshold={self.exit_threshold}")
        if self.cascade_threshold is not None:
            out.append(f"cascade.threshold={self.cascade_threshold}")
        out.append(f"lora.enabled={'true' if self.adapt_rate else 'false'}")
        return out


PROFILES = {
    "turbo": Profile("turbo", 256, None, None, 0, 2,
                     "up to 256 streams (256 bytes each at least), early exits and cascade "
                     "shortcuts as trained, its streams split over two processes when two "
                     "cores are idle, the mixing "
                     "stage: fastest", 256, coder="cm"),
    "fast": Profile("fast", 64, None, 1.0, ADAPT_RATE, 2,
                    "up to 64 streams (1 KiB each at least), early exits as trained, cascade "
                    "never used alone, online adaptation, its streams split over two processes "
                    "when two cores are idle, the mixing stage", 1024, coder="cm"),
    "balanced": Profile("balanced", 16, 1.0, 1.0, ADAPT_RATE, 2,
                        "up to 16 streams (4 KiB each at least), every byte through the whole "
                        "model, online adaptation, its streams split over two processes when "
                        "two cores are idle, the mixing stage: best bpb, slowest", 4096,
                        coder="cm"),
    "cm": Profile("cm", 1, None, None, 0, 1,
                  "the mixing stage alone: context models, no network; no model file unless "
                  "the model has a primer, which primes the stage; one stream", 1 << 62,
                  coder="cm", network=False),
}


def most_threads() -> int:
    """What a decoder asks the thread plan for before it knows the file's profile: the largest
    count a profile may use (turbo's and fast's two processes)."""
    return max(p.threads for p in PROFILES.values())


AUTO = "auto"               # not a profile: per file, AUTO_NETWORK or cm (choose.py decides)
AUTO_NETWORK = "fast"


def names() -> list[str]:
    """What a user may ask for: every profile, and auto."""
    return [*PROFILES, AUTO]


def base(name: str) -> Profile:
    """The profile that sets frame size and threads for `name` (auto: its network profile's)."""
    return get(AUTO_NETWORK if name == AUTO else name)


def get(name: str) -> Profile:
    if name not in PROFILES:
        raise UserError(f"unknown profile {name!r}; choose one of {', '.join(PROFILES)}")
    return PROFILES[name]


def needs_model(header) -> bool:
    """Whether decoding a file (its header) needs a model: a network profile, or cm primed with
    a model's primer (the header then names the model). UserError for an unknown profile."""
    return get(header.profile).network or any(header.model_hash)
