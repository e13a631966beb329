"""The config editor's model: schema fields <-> form values, validation, load and save. No Dash.

The panel draws one widget per `FieldInfo` in `FIELDS`; callbacks pass values as {dotted key:
value}. A widget holds: bool (switch), number (number input, slider), text or select (str),
"4,16" (int_list), "0.9,0.95" (float_pair), str(choice) (dropdown).
"""
from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from umoec import config as C
from umoec.config.fields import FieldInfo, fmt_num
from umoec.config.io import PRESET_DIR, read_yaml_text
from umoec.config.registry import set_value
from umoec.config.validate import FieldError, coerce, cross_check
from umoec.config.validate import warnings as config_warnings
from umoec.train.preflight import refusals

ROOT = Path(__file__).resolve().parents[1]   # where the launcher runs the trainer

# Every field the accordion shows (the top-level `tier` is the tier dropdown instead).
FIELDS: tuple[FieldInfo, ...] = tuple(f for f in C.all_fields() if f.section)
FIELD_IDS: list[str] = [f.component_id for f in FIELDS]     # the form's widgets, in FIELDS order
BY_KEY: dict[str, FieldInfo] = {f.key: f for f in FIELDS}
TIER_INFO: FieldInfo = C.fields_by_key()["tier"]

# The component checklist: quick toggles mirroring these section switches.
COMPONENTS: dict[str, str] = {
    "mod.enabled": "Mixture-of-Depths",
    "early_exit.enabled": "Early exit",
    "cascade.enabled": "Cascade",
    "conditioning.ada_ln_zero": "AdaLN-Zero",
    "conditioning.cross_attn": "Cross-attention",
    "patches.multi_token_predict": "Multi-token prediction",
    "lora.enabled": "Online LoRA",
    "entropy.probability_sharpening": "Probability sharpening",
}

YAML_SUFFIXES = (".yaml", ".yml")


def values_of(raw: list) -> dict[str, Any]:
    """The widgets' values in FIELD_IDS order (a callback's arguments) -> {dotted key: value}."""
    return dict(zip((f.key for f in FIELDS), raw, strict=True))


# -- representation ---------------------------------------------------------------------------
def to_form(info: FieldInfo, value: Any) -> Any:
    """A config value as its widget holds it."""
    if info.kind in ("int_list", "float_pair"):
        return ",".join(fmt_num(v) for v in value)
    if info.widget == "dropdown":
        return str(value)
    return value


def form_values(cfg: C.Config) -> dict[str, Any]:
    """Widget values for every field of `cfg`, keyed by dotted key."""
    return {f.key: to_form(f, C.get_value(cfg, f.key)) for f in FIELDS}


def default_values() -> dict[str, Any]:
    return form_values(C.Config())


def checklist_value(values: Mapping[str, Any]) -> list[str]:
    """The component checklist's value: keys of the component switches that are on."""
    return [k for k in COMPONENTS if values.get(k) is True]


# -- validation -------------------------------------------------------------------------------
@dataclass
class FormCheck:
    """The outcome of checking the form: a Config when everything is valid."""

    config: C.Config | None
    errors: dict[str, str] = field(default_factory=dict)    # dotted key -> message
    warnings: dict[str, str] = field(default_factory=dict)  # dotted key -> message
    # dotted key -> why the trainer would stop before its first step (the simulator runs it)
    refusals: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.config is not None

    @property
    def problem(self) -> str:
        """Why the form cannot be used, e.g. 'the form has 2 errors (first: ...)'."""
        n = len(self.errors)
        return f"the form has {n} error{'s' if n > 1 else ''} (first: {next(iter(self.errors.values()))})"


def check(values: Mapping[str, Any], tier: Any) -> FormCheck:
    """Coerce every field (type, range, choices), then the cross-field rules."""
    cfg = C.Config()
    errors: dict[str, str] = {}
    try:
        cfg.tier = coerce(TIER_INFO, tier)
        if not cfg.tier:
            errors["tier"] = "tier is empty; choose a preset"
    except FieldError as exc:
        errors["tier"] = str(exc)
    for info in FIELDS:
        raw = values.get(info.key)
        if isinstance(raw, str) and info.kind in ("int", "float") and not raw.strip():
            raw = None
        try:
            set_value(cfg, info.key, coerce(info, raw))
        except FieldError as exc:
            errors[info.key] = str(exc)
    if not errors:
        for issue in cross_check(cfg):
            errors.setdefault(issue.key, issue.message)
    if errors:
        return FormCheck(None, errors)
    return FormCheck(cfg, {}, {i.key: i.message for i in config_warnings(cfg)}, refusals(cfg, ROOT))


# -- files ------------------------------------------------------------------------------------
class FormFileError(ValueError):
    """A config file cannot be read or written; the message says why and what to do."""


def resolve_path(text: str | None, base: Path | None = None) -> Path:
    """A user-typed path: ~ expanded, relative paths against `base` (default: the cwd)."""
    text = (text or "").strip()
    if not text:
        raise FormFileError("type a file path first, e.g. configs/my_run.yaml")
    if "\x00" in text:
        raise FormFileError("the path contains a NUL character")
    path = Path(os.path.expanduser(text))
    if not path.is_absolute():
        path = (base or Path.cwd()) / path
    return path


@dataclass
class Loaded:
    values: dict[str, Any]
    tier: str
    notes: list[str]  # keys that were ignored or could not be shown

    @property
    def note(self) -> str:
        """' (note; note)' to append to a message, '' without notes."""
        return f" ({'; '.join(self.notes)})" if self.notes else ""


def _flatten(data: Any, prefix: str, out: dict[str, Any], notes: list[str]) -> None:
    known = C.fields_by_key()
    for raw_key, value in data.items():
        key = prefix + str(raw_key)
        if key in known:
            out[key] = value
        elif isinstance(value, dict) and any(k.startswith(key + ".") for k in known):
            _flatten(value, key + ".", out, notes)
        else:
            notes.append(f"unknown key {key} ignored")


def _raw_to_form(info: FieldInfo, raw: Any, notes: list[str]) -> Any:
    """A raw YAML value as the widget should show it, even when it is invalid (so the
    validator can mark the field), or the default when the widget cannot hold it."""
    if info.kind in ("int_list", "float_pair"):
        if isinstance(raw, (list, tuple)):
            return ",".join(fmt_num(v) if isinstance(v, (int, float)) and not isinstance(v, bool)
                            else str(v) for v in raw)
        return "" if raw is None else str(raw)
    if info.kind == "bool":
        try:
            return coerce(info, raw)
        except FieldError as exc:
            notes.append(f"{exc}; kept the default")
            return info.default
    if info.kind in ("int", "float") and info.widget != "dropdown":
        if isinstance(raw, str):  # PyYAML reads 3e-3 as text
            try:
                return float(raw) if info.kind == "float" else int(float(raw))
            except ValueError:
                return raw
        return raw
    if raw is None:
        return ""
    return str(raw) if info.widget == "dropdown" else raw


def values_from_text(text: str, source: str) -> Loaded:
    """Form values from YAML text; omitted keys take the schema defaults. Invalid values are kept
    as written (the form marks them); unreadable YAML, a non-mapping or unknown keys are reported."""
    try:
        data = read_yaml_text(text, source)
    except C.ConfigError as exc:
        raise FormFileError(str(exc)) from None
    if not isinstance(data, dict):
        raise FormFileError(f"{source} is not a config: expected a mapping of sections, got "
                            f"{type(data).__name__}")
    flat: dict[str, Any] = {}
    notes: list[str] = []
    _flatten(data, "", flat, notes)
    values = default_values()
    values.update({k: _raw_to_form(BY_KEY[k], raw, notes) for k, raw in flat.items() if k in BY_KEY})
    tier = flat.get("tier", TIER_INFO.default)
    return Loaded(values, str(tier) if tier is not None else "", notes)


def load_file(path: Path) -> Loaded:
    """Form values from a config file, with the config loader's checks (regular file, size, UTF-8)."""
    try:
        text = C.read_config_file(path)
    except C.ConfigError as exc:
        raise FormFileError(f"{path}: {exc.issues[0].message}") from None
    return values_from_text(text, str(path))


class NeedsConfirmation(FormFileError):
    """The file exists: saving again over it must be asked for (overwrite=True)."""


def save_file(values: Mapping[str, Any], tier: Any, path: Path, overwrite: bool = False) -> Path:
    """Write the valid form as commented YAML; never over a shipped preset, over others if `overwrite`."""
    result = check(values, tier)
    if not result.ok:
        raise FormFileError(f"not saved: {result.problem}")
    if path.suffix.lower() not in YAML_SUFFIXES:
        raise FormFileError(f"not saved: {path.name} must end in .yaml or .yml")
    if path.is_dir():
        raise FormFileError(f"not saved: {path} is a folder")
    if not path.parent.is_dir():
        raise FormFileError(f"not saved: folder {path.parent} does not exist")
    if path.exists() and path.resolve().parent == PRESET_DIR.resolve():
        raise FormFileError(f"not saved: {path.name} is a preset shipped with u-moec-tiny "
                            "(configs/); save under another name")
    if path.exists() and not overwrite:
        raise NeedsConfirmation(f"{path} already exists: press Save Config again to overwrite it")
    try:
        return C.save(result.config, path, header=f"Saved from the u-moec-tiny cockpit "
                      f"(tier {result.config.tier}).")
    except PermissionError:
        raise FormFileError(f"not saved: permission denied writing {path}") from None
    except OSError as exc:
        raise FormFileError(f"not saved: {path}: {exc.strerror or exc}") from None


def preset_values(tier: str) -> dict[str, Any]:
    """Form values of a tier or a user-saved preset; ConfigError if it is missing or broken."""
    from .services import presets
    if (user := presets.user_preset_path(tier)) is not None:
        try:
            return load_file(user).values
        except FormFileError as exc:
            raise C.ConfigError([C.Issue("tier", str(exc))]) from None
    return form_values(C.load_preset(tier))
