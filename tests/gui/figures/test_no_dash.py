"""gui/figures/ stays pure: no Dash, no file or database I/O. Callbacks read the data and pass it
in; a figure module that imports dash or opens a file fails here."""
import ast
import subprocess
import sys

import pytest

from tests.conftest import ROOT

FIGURES = ROOT / "gui" / "figures"
MODULES = sorted(FIGURES.glob("*.py"))
BANNED_IMPORTS = ("dash", "sqlite3")               # and their submodules (dash.dcc, ...)
BANNED_CALLS = ("open",)                           # open(...), io.open(...), Path.open(...)
BANNED_PREFIXES = ("read_", "write_")              # pd.read_csv, Path.read_text, fig.write_image


def offences(path) -> list[str]:
    """What in one module imports a banned module or calls something that does I/O."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [node.module or ""] if node.level == 0 else []
        else:
            names = []
        found += [f"line {node.lineno}: import {n}" for n in names
                  if n.split(".")[0] in BANNED_IMPORTS]
        if isinstance(node, ast.Call):
            f = node.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
            if name in BANNED_CALLS or name.startswith(BANNED_PREFIXES):
                found.append(f"line {node.lineno}: {name}(...)")
    return found


def test_there_are_figure_modules_to_check():
    assert {p.stem for p in MODULES} >= {"base", "series", "training", "routing", "mod",
                                         "activations", "architecture", "growth", "compression",
                                         "compare"}


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_figure_module_imports_no_dash_and_does_no_io(path):
    assert offences(path) == []


def test_the_checker_catches_what_it_should(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import sqlite3\nfrom dash import dcc\nimport pandas as pd\n"
                   "df = pd.read_csv('x.csv')\nwith open('y') as fh:\n    pass\n")
    assert [o.split(": ")[1] for o in offences(bad)] == [
        "import sqlite3", "import dash", "read_csv(...)", "open(...)"]


def test_importing_every_figure_module_does_not_load_dash():
    """Also through what the modules import (gui.view.architecture, umoec.metrics, ...)."""
    names = ", ".join(f"gui.figures.{p.stem}" for p in MODULES if p.stem != "__init__")
    code = (f"import sys, importlib\nfor n in '{names}'.split(', '):\n    importlib.import_module(n)\n"
            "print(sorted(m for m in sys.modules if m == 'dash' or m.startswith('dash.')))")
    res = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "[]"
