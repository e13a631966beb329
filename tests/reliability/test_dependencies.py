"""Dependencies are pinned, and the environment the tests run in is the pinned one.

An online vulnerability audit cannot run inside the test suite (it needs an advisory database);
docs/reliability.md says how to run pip-audit against constraints.txt and what it found.
"""
from __future__ import annotations

import re
from importlib import metadata

import pytest

from tests.conftest import ROOT

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    tomllib = pytest.importorskip("tomli")

PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?==([^\s;,]+)$")


def norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pyproject_requirements() -> list[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = [r for group in project.get("optional-dependencies", {}).values() for r in group]
    return project["dependencies"] + extras


def constraints() -> dict[str, str]:
    out = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        m = PIN.match(line)
        assert m, f"constraints.txt: {line!r} is not an exact name==version pin"
        out[norm(m.group(1))] = m.group(3)
    return out


def test_every_direct_dependency_is_an_exact_pin_that_constraints_agree_with():
    pins = constraints()
    for req in pyproject_requirements():
        m = PIN.match(req.replace(" ", ""))
        assert m, f"pyproject.toml: {req!r} is not an exact == pin"
        assert pins.get(norm(m.group(1))) == m.group(3), f"{req} vs constraints.txt"


def test_the_installed_environment_is_the_pinned_one():
    """Every direct dependency is installed at its pin, and every installed package that
    constraints.txt names has the pinned version (constraints.txt may name packages this
    environment does not need: pip installs only what is required)."""
    pins = constraints()
    installed = {norm(d.metadata["Name"]): d.version for d in metadata.distributions()}
    direct = [norm(PIN.match(r.replace(" ", "")).group(1)) for r in pyproject_requirements()]
    missing = sorted(n for n in direct if n not in installed)
    wrong = sorted(f"{n}: {installed[n]} installed, {v} pinned" for n, v in pins.items()
                   if n in installed and installed[n].split("+")[0] != v.split("+")[0])
    assert missing == [] and wrong == [], (missing, wrong)
