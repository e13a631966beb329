"""The cockpit's layers keep to their jobs: services/ and view/ import no Dash; view/ does no I/O
(figures/ is checked by figures/test_no_dash.py); callbacks read through db, services and the
file-format modules rather than opening databases or files themselves, and do not grow new
imports of one another; no component id is used twice."""
import ast
import json
from collections import Counter

import pytest
from plotly.utils import PlotlyJSONEncoder

from tests.conftest import ROOT
from tests.gui.figures.test_no_dash import offences

GUI = ROOT / "gui"
SERVICES = sorted((GUI / "services").glob("*.py"))
VIEW = sorted((GUI / "view").glob("*.py"))
CALLBACKS = sorted(p for p in (GUI / "callbacks").glob("*.py") if p.name != "__init__.py")
IO_CALLS = ("open", "connect", "read_text", "read_bytes", "write_text", "write_bytes", "read_csv",
            "safe_load")
# Imports between callback modules that are still there: shared helpers that belong in view/ or
# services/ (checkpoint pickers, zoom events, status areas). The list may only shrink.
KNOWN_CALLBACK_IMPORTS = {
    ("compare_callbacks", "zoom_events"), ("compression_callbacks", "checkpoint_select"),
    ("eval_callbacks", "compression_callbacks"), ("generate_callbacks", "checkpoint_select"),
    ("model_export_callbacks", "compression_callbacks"), ("training_callbacks", "checkpoint_select"),
    ("training_callbacks", "zoom_callbacks"), ("training_callbacks", "forge_training"),
    ("zoom_callbacks", "zoom_events"),
}


def imported_modules(path) -> list[str]:
    names = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names.append(node.module or "")
    return names


def sibling_imports(path) -> set[tuple[str, str]]:
    """(this module, sibling) for every `from . import x` / `from .x import ...` in `path`."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            targets = [node.module] if node.module else [a.name for a in node.names]
            found |= {(path.stem, t.split(".")[0]) for t in targets}
    return found


def io_calls(path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
            if name in IO_CALLS:
                found.append(f"line {node.lineno}: {name}(...)")
    return found


def test_there_are_modules_in_each_layer():
    assert {p.stem for p in SERVICES} >= {"analysis", "cache", "supervisor", "watchdog"}
    assert {p.stem for p in VIEW} >= {"analysis"}
    assert len(CALLBACKS) >= 20


@pytest.mark.parametrize("path", SERVICES + VIEW, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_services_and_view_import_no_dash(path):
    dash = ("dash", "dash_bootstrap_components")
    assert [n for n in imported_modules(path) if n.split(".")[0] in dash] == []


@pytest.mark.parametrize("path", VIEW, ids=lambda p: p.name)
def test_view_modules_do_no_io(path):
    assert offences(path) == []


@pytest.mark.parametrize("path", CALLBACKS, ids=lambda p: p.name)
def test_callbacks_open_no_database_or_file_themselves(path):
    assert "sqlite3" not in imported_modules(path)
    assert io_calls(path) == []


def test_callback_modules_add_no_imports_of_one_another():
    found = set().union(*(sibling_imports(p) for p in CALLBACKS))
    assert found - KNOWN_CALLBACK_IMPORTS == set(), "a new import between callback modules"
    assert KNOWN_CALLBACK_IMPORTS - found == set(), "gone: remove it from KNOWN_CALLBACK_IMPORTS"


def test_the_checkers_catch_what_they_should(tmp_path):
    bad = tmp_path / "x_callbacks.py"
    bad.write_text("import sqlite3\nfrom . import other\nfrom .third import f\nimport yaml\n"
                   "cfg = yaml.safe_load(path.read_text())\n")
    assert "sqlite3" in imported_modules(bad)
    assert sibling_imports(bad) == {("x_callbacks", "other"), ("x_callbacks", "third")}
    assert [c.split(": ")[1] for c in io_calls(bad)] == ["safe_load(...)", "read_text(...)"]


def id_counts(node) -> Counter:
    """How often each component id occurs in a layout (dict ids as sorted JSON)."""
    counts = Counter()

    def walk(n):
        if isinstance(n, dict):
            if "props" in n and "type" in n:
                if "id" in n["props"]:
                    i = n["props"]["id"]
                    counts[json.dumps(i, sort_keys=True) if isinstance(i, dict) else i] += 1
                for v in n["props"].values():
                    walk(v)
            else:
                for v in n.values():
                    walk(v)
        elif isinstance(n, list):
            for v in n:
                walk(v)
    walk(json.loads(json.dumps(node, cls=PlotlyJSONEncoder)))
    return counts


def test_no_component_id_is_used_twice(tmp_path):
    from gui import ids
    from gui.app import create_app
    constants = [v for k, v in vars(ids).items() if k.isupper() and isinstance(v, str)]
    assert [v for v, n in Counter(constants).items() if n > 1] == []
    app = create_app(tmp_path / "runs", data_dir=tmp_path / "data")
    counts = id_counts(app.validation_layout.to_plotly_json())
    assert len(counts) > 300
    assert [i for i, n in counts.items() if n > 1] == []
