"""A flat view of the schema: every field with its dotted key, kind and metadata.

The YAML loader, the CLI overrides, the docs generator and the cockpit's form all walk this list,
so a field added to `schema.py` appears everywhere at once.
"""
from __future__ import annotations

import dataclasses
from functools import lru_cache
from typing import Any

from . import schema
from .fields import FieldInfo, kind_of


def _section_type(annotation: Any):
    """The dataclass a section field refers to, or None for a leaf field."""
    obj = getattr(schema, str(annotation), None)
    return obj if dataclasses.is_dataclass(obj) else None


def _walk(cls, prefix: str):
    for f in dataclasses.fields(cls):
        sub = _section_type(f.type)
        if sub is not None:
            yield from _walk(sub, f"{prefix}{f.name}.")
            continue
        default = f.default if f.default is not dataclasses.MISSING else f.default_factory()
        section = prefix[:-1]
        yield FieldInfo(key=prefix + f.name, section=section, name=f.name, kind=kind_of(f.type),
                        default=default, spec=f.metadata["spec"])


@lru_cache(maxsize=1)
def all_fields() -> tuple[FieldInfo, ...]:
    """Every leaf field of the schema, in declaration order."""
    return tuple(_walk(schema.Config, ""))


@lru_cache(maxsize=1)
def fields_by_key() -> dict[str, FieldInfo]:
    return {f.key: f for f in all_fields()}


def section_fields(section: str) -> list[FieldInfo]:
    """Fields of one section, e.g. "moe" or "optimizer.muon" ("" for top-level fields)."""
    return [f for f in all_fields() if f.section == section]


def section_names() -> list[str]:
    """Dotted names of the sections holding fields, in the order of SECTION_TITLES."""
    return list(schema.SECTION_TITLES)


def get_value(cfg: schema.Config, key: str) -> Any:
    obj = cfg
    for part in key.split("."):
        obj = getattr(obj, part)
    return obj


def set_value(cfg: schema.Config, key: str, value: Any) -> None:
    *path, last = key.split(".")
    obj = cfg
    for part in path:
        obj = getattr(obj, part)
    setattr(obj, last, value)
