"""Read and write configs: YAML (safe_load only), dotted `--set` overrides, commented dumps."""
from __future__ import annotations

import dataclasses
import os
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml

from .errors import ConfigError, Issue
from .fields import FieldInfo
from .registry import all_fields, fields_by_key, get_value
from .schema import SECTION_TITLES, Config
from .validate import build, unknown_key_issue

# Where the tier presets live (repo root / configs).
PRESET_DIR = Path(__file__).resolve().parents[2] / "configs"
MAX_CONFIG_BYTES = 1 << 20  # a config is a few KB; refuse anything that is clearly not one


def to_dict(cfg: Config) -> dict[str, Any]:
    """Nested plain dict (lists, not tuples) ready for YAML or JSON."""
    def plain(v: Any) -> Any:
        return list(v) if isinstance(v, tuple) else v
    return dataclasses.asdict(cfg, dict_factory=lambda kv: {k: plain(v) for k, v in kv})


def read_yaml_text(text: str, source: str) -> Any:
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigError([Issue("", f"not valid YAML{where}: {problem}")], source) from None
    except RecursionError:
        raise ConfigError([Issue("", "not valid YAML: nested too deeply")], source) from None
    if data is None:
        raise ConfigError([Issue("", "the file is empty")], source)
    return data


def parse_override(item: str) -> tuple[str, Any]:
    """`moe.top_k=2` -> ("moe.top_k", raw value typed for the field)."""
    if "=" not in item:
        raise ConfigError([Issue("", f"--set {item!r} must look like section.key=value")])
    key, raw = item.split("=", 1)
    key = key.strip()
    info = fields_by_key().get(key)
    if info is None:
        raise ConfigError([unknown_key_issue(key)], f"--set {item}")
    if info.kind == "str":
        return key, raw
    try:
        return key, yaml.safe_load(raw) if raw.strip() else None
    except yaml.YAMLError:
        return key, raw


def apply_overrides(data: dict, overrides: Iterable[str]) -> dict:
    """Set dotted keys in a nested dict (a copy); values are checked later by `build`."""
    out = _deep_copy(data)
    for item in overrides:
        key, value = parse_override(item)
        node = out
        *path, last = key.split(".")
        for part in path:
            if not isinstance(node.get(part), dict):
                node[part] = {}
            node = node[part]
        node[last] = value
    return out


def _deep_copy(d: Any) -> Any:
    return {k: _deep_copy(v) for k, v in d.items()} if isinstance(d, dict) else d


def read_config_file(path: str | os.PathLike) -> str:
    """The text of a config file: a regular file, at most MAX_CONFIG_BYTES, UTF-8.

    Devices, pipes and folders are refused before reading (a size check alone would read
    /dev/zero forever or block on a FIFO); the read itself is bounded too.
    """
    path = Path(path)
    source = str(path)
    try:
        st = path.stat()
        if stat.S_ISDIR(st.st_mode):
            raise ConfigError([Issue("", "is a folder, not a YAML file")], source)
        if not stat.S_ISREG(st.st_mode):
            raise ConfigError([Issue("", "is not a regular file (a device or pipe?)")], source)
        with open(path, "rb") as fh:
            data = fh.read(MAX_CONFIG_BYTES + 1)
    except FileNotFoundError:
        raise ConfigError([Issue("", "no such file")], source) from None
    except PermissionError:
        raise ConfigError([Issue("", "permission denied")], source) from None
    except OSError as exc:
        raise ConfigError([Issue("", f"cannot be read ({exc.strerror or exc})")], source) from None
    if len(data) > MAX_CONFIG_BYTES:
        raise ConfigError([Issue("", f"is larger than any config ({MAX_CONFIG_BYTES:,} bytes "
                                     "max)")], source)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError([Issue("", "is not UTF-8 text")], source) from None


def load(path: str | os.PathLike, overrides: Iterable[str] = ()) -> Config:
    """Load, override and validate a YAML config; ConfigError names the file and key."""
    return loads(read_config_file(path), str(path), overrides)


def loads(text: str, source: str = "<text>", overrides: Iterable[str] = ()) -> Config:
    data = read_yaml_text(text, source)
    overrides = list(overrides)
    if overrides and isinstance(data, dict):
        data = apply_overrides(data, overrides)
        source += " with --set " + " ".join(overrides)
    return build(data, source)


def preset_names() -> list[str]:
    return sorted(p.stem for p in PRESET_DIR.glob("*.yaml"))


def load_preset(name: str, overrides: Iterable[str] = ()) -> Config:
    if name not in preset_names():
        raise ConfigError([Issue("tier", f"unknown tier {name!r}; presets: "
                                         f"{', '.join(preset_names())}")])
    return load(PRESET_DIR / f"{name}.yaml", overrides)


def _scalar(info: FieldInfo, value: Any) -> str:
    if info.kind in ("int_list", "float_pair"):
        return "[" + ", ".join(_scalar_text(v) for v in value) + "]"
    return _scalar_text(value)


def _scalar_text(value: Any) -> str:
    return yaml.safe_dump(value, default_flow_style=True, width=10**6).strip().removesuffix("...").strip()


def _comment(info: FieldInfo) -> str:
    extra = ", ".join(x for x in (info.range_text(), info.spec.unit) if x)
    return f"# {info.spec.description}" + (f" [{extra}]" if extra else "")


def dumps(cfg: Config, header: str = "") -> str:
    """YAML text with a comment above every key (description, range, unit).

    `header` (comment lines) goes first, separated by a blank line so `leading_comment` finds it.
    """
    lines = [h if h.startswith("#") else f"# {h}".rstrip() for h in header.splitlines()]
    if lines:
        lines.append("")

    def emit(info: FieldInfo, indent: str) -> None:
        lines.append(indent + _comment(info))
        lines.append(indent + f"{info.name}: {_scalar(info, get_value(cfg, info.key))}")

    for info in all_fields():
        if info.section == "":
            emit(info, "")
    opened: set[str] = set()
    for section in SECTION_TITLES:
        parts = section.split(".")
        if parts[0] not in opened:
            lines.append("")
        for depth in range(len(parts)):
            name = ".".join(parts[: depth + 1])
            if name not in opened:
                opened.add(name)
                lines.append("  " * depth + f"{parts[depth]}:")
        for info in all_fields():
            if info.section == section:
                emit(info, "  " * len(parts))
    return "\n".join(lines) + "\n"


def leading_comment(text: str) -> str:
    """The header comment block of a YAML file: comment lines followed by a blank line."""
    out = []
    for line in text.splitlines():
        if line.startswith("#"):
            out.append(line)
            continue
        return "\n".join(out) if not line.strip() else ""
    return ""


def save(cfg: Config, path: str | os.PathLike, header: str = "") -> Path:
    """Write a commented YAML file atomically (a crash never leaves half a config)."""
    from ..run.atomic import atomic_write_text
    path = Path(path)
    atomic_write_text(path, dumps(cfg, header))
    return path
