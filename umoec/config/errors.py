"""Config errors a user can act on: which file, which key, what is wrong, what is allowed."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Issue:
    key: str      # dotted key the message is about ("" for the whole file)
    message: str  # full sentence, already naming the key and the allowed values

    def __str__(self) -> str:
        return self.message


class ConfigError(ValueError):
    """One or more problems with a config; `issues` lists them field by field."""

    def __init__(self, issues: list[Issue], source: str | None = None):
        self.issues = list(issues)
        self.source = source
        super().__init__(self.render())

    def render(self) -> str:
        head = "config error" + (f" in {self.source}" if self.source else "")
        if len(self.issues) == 1:
            return f"{head}: {self.issues[0].message}"
        where = f" in {self.source}" if self.source else ""
        return "\n".join([f"{len(self.issues)} config errors{where}:"]
                         + [f"  - {i.message}" for i in self.issues])

    def by_key(self) -> dict[str, str]:
        """First message per key (what the cockpit shows next to each field)."""
        out: dict[str, str] = {}
        for i in self.issues:
            out.setdefault(i.key, i.message)
        return out
