"""What the Growth tab computes: the config form with six size knobs changed, and its sizes (pure).

`grow` applies a choice of knobs to the sidebar's form values and keeps the config legal (top_k,
seq_len, early exits, AdaLN blocks and context_len follow), checked by `gui.form.check`, sized by
`umoec.sizing`. The compute-optimal length is a heuristic: BYTES_PER_PARAM bytes per parameter
(Chinchilla's ~20 tokens, one byte as one token), never fitted to byte-level SSM/MoE models.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from umoec import sizing
from umoec.config import Config

from .. import form

BYTES_PER_PARAM = 20
KNOBS = ("model.d_model", "model.n_blocks", "moe.n_routed", "moe.top_k", "moe.d_ff",
         "model.context_len")
SWEEPS = ("model.d_model", "model.n_blocks", "moe.n_routed")    # the curves' x axes
LOG_X = {"model.d_model", "moe.d_ff", "model.context_len"}      # geometric ladders
SWEPT = ("total", "active", "flops", "memory")                  # the sizes a sweep and the curves show


def short(key: str) -> str:
    return key.rsplit(".", 1)[1]


def fmt_knob(value: int) -> str:
    """1024 -> 1k, 1536 -> 1.5k, 1048576 -> 1M (slider marks, log axis ticks)."""
    for unit, scale in (("M", 1 << 20), ("k", 1 << 10)):
        if value >= scale and value % (scale // 4) == 0:
            return f"{value / scale:g}{unit}"
    return str(value)


# -- slider ladders ---------------------------------------------------------------------------
def _geometric(lo: int, hi: int) -> list[int]:
    """2^k and 3 * 2^(k-1) between lo and hi: 16, 24, 32, 48, 64, 96, ..."""
    return sorted({v for k in range(hi.bit_length()) for v in (1 << k, 3 << k >> 1) if lo <= v <= hi})


def ladder(key: str, current: int | None, scales: tuple = ()) -> list[int]:
    """The values the knob's slider offers (always including the form's current value)."""
    spec = form.BY_KEY[key].spec
    lo, hi = int(spec.lo), int(spec.hi)
    if key == "model.d_model":
        values = _geometric(lo, hi)
    elif key == "moe.d_ff":
        values = _geometric(max(lo, 16), hi)
    elif key == "model.context_len":
        step = math.lcm(*scales) if scales else 1
        values = [v for v in _geometric(lo, hi) if v % step == 0]
    else:  # n_blocks, n_routed: up to 64; top_k: up to 16
        values = list(range(lo, min(hi, 16 if key == "moe.top_k" else 64) + 1))
    if isinstance(current, int) and lo <= current <= hi and current not in values:
        values = sorted(values + [current])
    return values


def nearest_index(values: list[int], current: int | None) -> int:
    if not isinstance(current, (int, float)):
        return 0
    return min(range(len(values)), key=lambda i: (abs(values[i] - current), i))


# -- applying a choice ------------------------------------------------------------------------
def _int(value: Any) -> int | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return int(number) if math.isfinite(number) and number.is_integer() else None


def _ints(text: Any) -> list[int] | None:
    """A list field as the form holds it ("4,16"), or None when it does not parse."""
    if isinstance(text, (list, tuple)):
        items = list(text)
    else:
        items = [p for p in str(text or "").strip().strip("[]()").replace(" ", "").split(",") if p]
    out = [_int(v) for v in items]
    return None if any(v is None for v in out) else out


def _join(values: list[int]) -> str:
    return ",".join(str(v) for v in values)


def knob_values(values: Mapping[str, Any]) -> dict[str, int | None]:
    """The six knobs as the form has them (None where a field is not an integer)."""
    return {k: _int(values.get(k)) for k in KNOBS}


def scales_of(values: Mapping[str, Any]) -> tuple:
    scales = _ints(values.get("patches.scales")) or []
    return tuple(s for s in scales if s > 0)


@dataclass
class Grown:
    values: dict                        # the whole form, with the choice applied
    changes: dict                       # dotted key -> form value, only keys that differ
    notes: list = field(default_factory=list)
    check: form.FormCheck | None = None

    @property
    def config(self) -> Config | None:
        return self.check.config if self.check else None


def grow(values: Mapping[str, Any], tier: Any, choice: Mapping[str, int]) -> Grown:
    """The form `values` with the knobs in `choice` set, adjusted to stay legal, and checked."""
    new = {**values, **{k: int(choice[k]) for k in KNOBS if choice.get(k) is not None}}
    notes = []
    n_routed, top_k = _int(new.get("moe.n_routed")), _int(new.get("moe.top_k"))
    if n_routed is not None and top_k is not None and top_k > n_routed:
        new["moe.top_k"] = n_routed
        notes.append(f"top_k capped at n_routed = {n_routed}")
    old_ctx, ctx = _int(values.get("model.context_len")), _int(new.get("model.context_len"))
    seq = _int(values.get("training.seq_len"))
    if ctx is not None and seq is not None and old_ctx != ctx:
        new_seq = ctx if seq == old_ctx else min(seq, ctx)
        if new_seq != seq:
            new["training.seq_len"] = new_seq
            notes.append(f"training.seq_len {seq:,} -> {new_seq:,} (follows context_len)")
    n = _int(new.get("model.n_blocks"))
    if n is not None and n != _int(values.get("model.n_blocks")):
        exits = _ints(values.get("early_exit.blocks"))
        if exits is not None and any(b >= n - 1 for b in exits):
            kept = [b for b in exits if b < n - 1]
            new["early_exit.blocks"] = _join(kept)
            if values.get("early_exit.enabled") is True:
                new["head.n_early_exit_heads"] = len(kept)
                if not kept:
                    new["early_exit.enabled"] = False
            notes.append("early exits after block(s) " + _join([b for b in exits if b >= n - 1])
                         + " dropped (an exit needs a later block)"
                         + ("; early exit switched off" if not kept else ""))
        ada = _ints(values.get("conditioning.ada_ln_blocks"))
        if ada is not None and any(b >= n for b in ada):
            kept = [b for b in ada if b < n] or [0]
            new["conditioning.ada_ln_blocks"] = _join(kept)
            notes.append(f"AdaLN-Zero blocks -> {_join(kept)}")
    changes = {k: v for k, v in new.items() if values.get(k) != v}
    return Grown(new, changes, notes, form.check(new, tier))


# -- sizes --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Sizes:
    total: int                  # parameters, every expert
    active: float               # parameters per byte
    flops: float                # training FLOPs per byte
    memory: int                 # training memory per process, bytes
    bytes_per_step: int         # per process
    optimal_bytes: float        # BYTES_PER_PARAM * total (heuristic)
    planned_bytes: int          # what the config trains: steps * bytes/step * processes

    @property
    def optimal_steps(self) -> float:
        return self.optimal_bytes / self.bytes_per_step

    @property
    def optimal_flops(self) -> float:
        return self.flops * self.optimal_bytes


def sizes(cfg: Config) -> Sizes:
    total = sizing.total_params(cfg)
    per_step = sizing.tokens_per_step(cfg)
    return Sizes(total=total, active=sizing.active_params_per_byte(cfg),
                 flops=sizing.flops_per_byte(cfg), memory=sizing.training_memory_bytes(cfg),
                 bytes_per_step=per_step, optimal_bytes=float(BYTES_PER_PARAM * total),
                 planned_bytes=per_step * cfg.training.steps * max(1, cfg.hardware.gpus))


def sweep(values: Mapping[str, Any], tier: Any, choice: Mapping[str, int], key: str,
          xs: list[int]) -> pd.DataFrame:
    """Sizes (x, *SWEPT) with `key` set to each of `xs`, the other knobs as chosen (illegal x left out)."""
    rows = []
    for x in xs:
        grown = grow(values, tier, {**choice, key: x})
        if grown.config is None:
            continue
        s = sizes(grown.config)
        rows.append({"x": x, **{k: getattr(s, k) for k in SWEPT}})
    return pd.DataFrame(rows, columns=["x", *SWEPT])
