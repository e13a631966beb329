"""Field metadata for the config schema.

Every config field is a dataclass field created with `spec(...)`, which records what the YAML
loader, the CLI, the GUI form and the docs need to know about it: default, one-line description,
unit, numeric range or choices and the widget the cockpit shows. Nothing here imports torch.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

# Widget kinds the cockpit's config editor knows how to draw (each field names its own).
WIDGETS = ("number", "switch", "slider", "dropdown", "text", "list", "display")


@dataclass(frozen=True)
class FieldSpec:
    """Everything the schema says about one field, besides its Python type."""

    description: str
    unit: str = ""
    lo: float | None = None  # inclusive lower bound (numbers; list items for int lists)
    hi: float | None = None  # inclusive upper bound
    choices: tuple | None = None
    widget: str | None = None  # None: derived from the type
    step: float | None = None  # GUI increment for number/slider widgets


def spec(default: Any, description: str, *, unit: str = "", lo: float | None = None,
         hi: float | None = None, choices: Sequence | None = None, widget: str | None = None,
         step: float | None = None):
    """A dataclass field carrying a FieldSpec in its metadata."""
    if widget is not None and widget not in WIDGETS:
        raise ValueError(f"unknown widget {widget!r}")
    meta = {"spec": FieldSpec(description, unit, lo, hi, tuple(choices) if choices else None,
                              widget, step)}
    if isinstance(default, (list, dict)):
        return field(default_factory=lambda d=default: type(d)(d), metadata=meta)
    return field(default=default, metadata=meta)


@dataclass(frozen=True)
class FieldInfo:
    """A flattened view of one field: where it lives and what it accepts."""

    key: str          # dotted YAML path, e.g. "optimizer.muon.lr"
    section: str      # dotted section path, e.g. "optimizer.muon"
    name: str         # field name, e.g. "lr"
    kind: str         # "int" | "float" | "bool" | "str" | "int_list" | "float_pair"
    default: Any
    spec: FieldSpec

    @property
    def widget(self) -> str:
        if self.spec.widget:
            return self.spec.widget
        if self.kind == "bool":
            return "switch"
        if self.spec.choices:
            return "dropdown"
        if self.kind in ("int", "float"):
            return "number"
        if self.kind in ("int_list", "float_pair"):
            return "list"
        return "text"

    @property
    def component_id(self) -> str:
        """The cockpit's component id: config-<section>-<field>, '_' and '.' as '-'."""
        return "config-" + f"{self.section}.{self.name}".replace(".", "-").replace("_", "-")

    def range_text(self) -> str:
        s = self.spec
        if s.choices:
            return " | ".join(str(c) for c in s.choices)
        if s.lo is not None and s.hi is not None:
            text = f"{fmt_num(s.lo)} .. {fmt_num(s.hi)}"
        elif s.lo is not None:
            text = f">= {fmt_num(s.lo)}"
        elif s.hi is not None:
            text = f"<= {fmt_num(s.hi)}"
        else:
            text = ""
        return text


def fmt_num(x: float) -> str:
    if float(x).is_integer() and abs(x) < 1e15:
        return str(int(x))
    return f"{x:g}"


def kind_of(annotation: Any) -> str:
    """Map a field annotation (as a string, from `from __future__ import annotations`) to a kind."""
    text = str(annotation).replace("typing.", "").replace(" ", "")
    table = {
        "int": "int", "float": "float", "bool": "bool", "str": "str",
        "list[int]": "int_list", "List[int]": "int_list",
        "tuple[float,float]": "float_pair", "Tuple[float,float]": "float_pair",
    }
    if text not in table:
        raise TypeError(f"unsupported config field type {annotation!r}")
    return table[text]
