"""Turn raw values (YAML, CLI, GUI form) into a checked Config, or say exactly what is wrong.

`coerce` checks one field (type, range, choices); `cross_check` checks rules between fields;
`build` does both for a whole nested dict. Every message names the dotted key, the bad value and
what is allowed, so the CLI can print it and the cockpit can show it next to the field.
"""
from __future__ import annotations

import difflib
import math
from typing import Any

from .errors import ConfigError, Issue
from .fields import FieldInfo, fmt_num
from .registry import all_fields, fields_by_key, set_value
from .schema import BLOCK_ALPHABET, Config

_TRUE = {"true", "yes", "on", "1"}
_FALSE = {"false", "no", "off", "0"}


class FieldError(ValueError):
    """A single field's value is unusable; the message is ready to show."""


def _show(value: Any) -> str:
    text = repr(value) if isinstance(value, str) else str(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _as_int(info: FieldInfo, value: Any) -> int:
    if isinstance(value, bool):
        raise FieldError(f"{info.key}={_show(value)} must be an integer, not true/false")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            number = math.nan
        if math.isfinite(number) and number.is_integer():
            return int(number)
    raise FieldError(f"{info.key}={_show(value)} must be an integer")


def _as_float(info: FieldInfo, value: Any) -> float:
    if isinstance(value, bool):
        raise FieldError(f"{info.key}={_show(value)} must be a number, not true/false")
    if isinstance(value, (int, float)):
        number = float(value)
    elif isinstance(value, str):
        try:  # PyYAML reads `3e-3` as a string: accept numeric text.
            number = float(value.strip())
        except ValueError:
            raise FieldError(f"{info.key}={_show(value)} must be a number") from None
    else:
        raise FieldError(f"{info.key}={_show(value)} must be a number")
    if not math.isfinite(number):
        raise FieldError(f"{info.key}={_show(value)} must be a finite number")
    return number


def _as_bool(info: FieldInfo, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
        return value.strip().lower() in _TRUE
    raise FieldError(f"{info.key}={_show(value)} must be true or false")


def _split(info: FieldInfo, value: Any) -> list:
    """Accept a YAML list, a single number, or text such as "4,7" / "[4, 7]" / ""."""
    if isinstance(value, (list, tuple)):
        return list(value)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return [value]
    if isinstance(value, str):
        text = value.strip().strip("[]()").strip()
        return [p.strip() for p in text.replace(";", ",").split(",")] if text else []
    raise FieldError(f"{info.key}={_show(value)} must be a list of numbers such as 4,7")


def _check_range(info: FieldInfo, number: float, label: str | None = None) -> None:
    s, label = info.spec, label or f"{info.key}={fmt_num(number)}"
    if s.lo is not None and number < s.lo:
        raise FieldError(f"{label} must be >= {fmt_num(s.lo)}")
    if s.hi is not None and number > s.hi:
        raise FieldError(f"{label} must be <= {fmt_num(s.hi)}")


def coerce(info: FieldInfo, value: Any) -> Any:
    """The checked, normalised value of one field, or FieldError with a message."""
    if value is None:
        raise FieldError(f"{info.key} is empty; expected {info.kind.replace('_', ' ')}"
                         + (f" ({info.range_text()})" if info.range_text() else ""))
    if info.kind == "bool":
        return _as_bool(info, value)
    if info.kind == "str":
        if not isinstance(value, str):
            raise FieldError(f"{info.key}={_show(value)} must be text")
        out: Any = value.strip()
    elif info.kind == "int":
        out = _as_int(info, value)
    elif info.kind == "float":
        out = _as_float(info, value)
    elif info.kind == "int_list":
        items = []
        for item in _split(info, value):
            try:
                items.append(_as_int(info, item))
            except FieldError:
                raise FieldError(f"{info.key}={_show(value)} must be whole numbers separated by "
                                 f"commas, e.g. 4,7") from None
        for item in items:
            _check_range(info, item, f"{info.key} entry {item}")
        if len(set(items)) != len(items):
            raise FieldError(f"{info.key}={_show(value)} lists an entry twice")
        return sorted(items)
    elif info.kind == "float_pair":
        parts = _split(info, value)
        if len(parts) != 2:
            raise FieldError(f"{info.key}={_show(value)} must be two numbers, e.g. 0.9,0.95")
        pair = tuple(_as_float(info, p) for p in parts)
        for item in pair:
            _check_range(info, item, f"{info.key} entry {fmt_num(item)}")
        return pair
    else:  # pragma: no cover - kind_of() admits no other kinds
        raise AssertionError(info.kind)
    if info.spec.choices is not None:
        if out not in info.spec.choices:
            raise FieldError(f"{info.key}={_show(value)} must be one of {info.range_text()}")
        return out
    if info.kind in ("int", "float"):
        _check_range(info, out)
    return out


def _suggest(key: str, candidates: list[str]) -> str:
    close = difflib.get_close_matches(key, candidates, n=1, cutoff=0.6)
    return f" (did you mean {close[0]}?)" if close else ""


def unknown_key_issue(key: str) -> Issue:
    keys = list(fields_by_key())
    sections = sorted({k.rsplit(".", 1)[0] for k in keys if "." in k})
    return Issue(key, f"unknown key {key}{_suggest(key, keys + sections)}")


def _flatten(data: Any, prefix: str, issues: list[Issue], out: dict[str, Any]) -> None:
    known = fields_by_key()
    if not isinstance(data, dict):
        what = prefix[:-1] or "the config"
        issues.append(Issue(prefix[:-1], f"{what} must be a mapping of keys to values, got "
                                         f"{type(data).__name__} {_show(data)}"))
        return
    for raw_key, value in data.items():
        key = prefix + str(raw_key)
        if key in known:
            out[key] = value
        elif any(k.startswith(key + ".") for k in known):
            _flatten(value, key + ".", issues, out)
        else:
            issues.append(unknown_key_issue(key))


def cross_check(cfg: Config) -> list[Issue]:
    """Rules that involve more than one field."""
    issues: list[Issue] = []

    def bad(key: str, message: str) -> None:
        issues.append(Issue(key, message))

    m, moe = cfg.model, cfg.moe
    if moe.top_k > moe.n_routed:
        bad("moe.top_k", f"moe.top_k={moe.top_k} must be <= moe.n_routed={moe.n_routed}")
    pattern = m.block_pattern
    if not pattern or any(c not in BLOCK_ALPHABET for c in pattern):
        bad("model.block_pattern", f"model.block_pattern={pattern!r} must be a non-empty string "
            f"of the letters {', '.join(BLOCK_ALPHABET)} (S = SSM+MoE, D = SSM+dense, "
            "lower case = MoD-routed)")
    last_exit = m.n_blocks - 2  # an exit after the final block would be the final head
    ee = cfg.early_exit
    for b in ee.blocks:
        if b > last_exit:
            bad("early_exit.blocks", f"early_exit.blocks entry {b} must be < model.n_blocks-1="
                f"{m.n_blocks - 1} (an exit needs at least one later block)")
    if ee.enabled and not ee.blocks:
        bad("early_exit.blocks", "early_exit.blocks is empty but early_exit.enabled is true")
    elif ee.enabled and cfg.head.n_early_exit_heads != len(ee.blocks):
        bad("head.n_early_exit_heads", f"head.n_early_exit_heads={cfg.head.n_early_exit_heads} "
            f"must equal the number of early_exit.blocks ({len(ee.blocks)})")
    cond = cfg.conditioning
    for b in cond.ada_ln_blocks:
        if b >= m.n_blocks:
            bad("conditioning.ada_ln_blocks", f"conditioning.ada_ln_blocks entry {b} must be < "
                f"model.n_blocks={m.n_blocks}")
    if cond.ada_ln_zero and not cond.ada_ln_blocks:
        bad("conditioning.ada_ln_blocks",
            "conditioning.ada_ln_blocks is empty but conditioning.ada_ln_zero is true")
    if (cond.ada_ln_zero or cond.cross_attn) and cfg.head.d_globals < 1:
        bad("head.d_globals", "head.d_globals=0 but conditioning is on (ada_ln_zero or "
            "cross_attn need at least one global value)")
    for s in cfg.patches.scales:
        if m.context_len % s:
            bad("patches.scales", f"patches.scales entry {s} must divide model.context_len="
                f"{m.context_len}")
    if cfg.patches.multi_token_predict and cfg.patches.primary < 2:
        bad("patches.primary", f"patches.primary={cfg.patches.primary} must be >= 2 when "
            "patches.multi_token_predict is on (it is the number of bytes predicted)")
    t = cfg.training
    if t.seq_len > m.context_len:
        bad("training.seq_len", f"training.seq_len={t.seq_len} must be <= model.context_len="
            f"{m.context_len}")
    if t.warmup_steps > t.steps:
        bad("training.warmup_steps", f"training.warmup_steps={t.warmup_steps} must be <= "
            f"training.steps={t.steps}")
    e = cfg.entropy
    if e.prob_precision > e.precision // 2:
        bad("entropy.prob_precision", f"entropy.prob_precision={e.prob_precision} must be <= "
            f"entropy.precision/2={e.precision // 2}")
    if e.match_min_len == 1:
        bad("entropy.match_min_len", "entropy.match_min_len=1 is not allowed: use 0 (off) or "
            "2..32 bytes")
    return issues


def warnings(cfg: Config) -> list[Issue]:
    """Legal but probably unintended settings (shown, never blocking)."""
    out = []
    if cfg.mod.enabled and not any(c.islower() for c in cfg.model.block_pattern):
        out.append(Issue("mod.enabled", "mod.enabled has no effect: model.block_pattern has no "
                         "lower-case (MoD-routed) block"))
    if cfg.training.precision != "fp32" and cfg.hardware.gpus == 0:
        out.append(Issue("training.precision", f"training.precision={cfg.training.precision} on "
                         "CPU: bf16 autocast is slow on most CPUs; fp32 is the CPU default"))
    return out


def build(data: Any, source: str | None = None) -> Config:
    """A checked Config from a nested dict; missing keys keep their schema defaults."""
    issues: list[Issue] = []
    flat: dict[str, Any] = {}
    _flatten(data, "", issues, flat)
    cfg = Config()
    for info in all_fields():
        if info.key not in flat:
            continue
        try:
            set_value(cfg, info.key, coerce(info, flat[info.key]))
        except FieldError as exc:
            issues.append(Issue(info.key, str(exc)))
    if not issues:
        issues = cross_check(cfg)
    if issues:
        raise ConfigError(issues, source)
    return cfg
