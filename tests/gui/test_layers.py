"""The cockpit's layers keep to their jobs: services/ and view/ import no Dash; view/ does no I/O
(figures/ is checked by figures/test_no_dash.py); pages read through umoec.metrics.read, services
and the file-format modules rather than opening databases or files themselves; a page imports no
other page (what two pages share is in components/, view/ or services/), and nothing below the
pages imports them; no component id is used twice, in a layout or across the ids modules."""
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
PAGE_MODULES = sorted(p for p in (GUI / "pages").glob("*/*.py") if p.name != "__init__.py")
BELOW_PAGES = sorted(p for d in ("services", "view", "figures", "components")
                     for p in (GUI / d).glob("*.py"))
IO_CALLS = ("open", "connect", "read_text", "read_bytes", "write_text", "write_bytes", "read_csv",
            "safe_load")


def imported_modules(path) -> list[str]:
    names = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names.append(node.module or "")
    return names


def module_name(path, root=ROOT) -> str:
    return ".".join(path.relative_to(root).with_suffix("").parts)


def gui_imports(path, root=ROOT) -> set[str]:
    """Every gui module `path` imports (relative imports resolved; `from x import y` gives x.y
    as well as x, since y may be a module)."""
    here = module_name(path, root).split(".")[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom):
            base = (here[:len(here) - node.level + 1] if node.level else [])
            mod = ".".join(base + ([node.module] if node.module else []))
            found.add(mod)
            found |= {f"{mod}.{a.name}" for a in node.names}
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
    return {m for m in found if m == "gui" or m.startswith("gui.")}


def page_of(module: str) -> str | None:
    """The page folder a gui module belongs to (gui.pages.<page>...), None outside the pages."""
    parts = module.split(".")
    return parts[2] if len(parts) > 3 and parts[:2] == ["gui", "pages"] else None


def other_pages(path, root=ROOT) -> set[str]:
    """The other page folders `path` imports from (its own page and pages/base.py are fine)."""
    mine = page_of(module_name(path, root))
    return {page_of(m) for m in gui_imports(path, root)
            if page_of(m) not in (None, mine, "base")}


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
    assert {p.stem for p in VIEW} >= {"analysis", "checkpoints"}
    assert len(PAGE_MODULES) >= 40
    assert not (GUI / "callbacks").exists() and not (GUI / "panels").exists()


@pytest.mark.parametrize("path", SERVICES + VIEW, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_services_and_view_import_no_dash(path):
    dash = ("dash", "dash_bootstrap_components")
    assert [n for n in imported_modules(path) if n.split(".")[0] in dash] == []


@pytest.mark.parametrize("path", VIEW, ids=lambda p: p.name)
def test_view_modules_do_no_io(path):
    assert offences(path) == []


@pytest.mark.parametrize("path", PAGE_MODULES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_pages_open_no_database_or_file_themselves(path):
    assert "sqlite3" not in imported_modules(path)
    assert io_calls(path) == []


@pytest.mark.parametrize("path", PAGE_MODULES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_a_page_imports_no_other_page(path):
    assert other_pages(path) == set()


@pytest.mark.parametrize("path", BELOW_PAGES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_nothing_below_the_pages_imports_them(path):
    assert {m for m in gui_imports(path) if m.startswith("gui.pages")} == set()


def test_every_page_is_in_the_tab_bar():
    """Each folder of gui/pages is a tab in PAGES (in ids.TAB_IDS order) or one of the parts
    around the tabs."""
    from gui import ids
    from gui.pages import PAGES, TABS
    folders = {p.name for p in (GUI / "pages").iterdir() if (p / "__init__.py").exists()}
    tabs = [row[2] for row in TABS]
    assert tuple(p.tab_id for p in PAGES) == ids.TAB_IDS
    assert len(set(tabs)) == len(tabs) == len(PAGES)
    assert folders - set(tabs) == {"header", "sidebar", "notifications"}
    assert set(tabs) <= folders


MAX_POSITIONAL_OUTPUTS = 6


def positional_outputs(path) -> dict[str, int]:
    """Callbacks of `path` that declare their Outputs positionally -> how many (a starred list
    of Outputs counts as one: one per field or tab, in the order of the sequence it walks, and
    returned by walking the same sequence)."""
    found = {}
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if not isinstance(node, ast.FunctionDef):
            continue
        for d in node.decorator_list:
            if isinstance(d, ast.Call) and getattr(d.func, "attr", "") == "callback":
                n = sum(1 for a in d.args if isinstance(a, ast.Call)
                        and getattr(a.func, "id", "") == "Output")
                n += sum(1 for a in d.args if isinstance(a, ast.Starred)
                         and "Output" in ast.unparse(a))
                if n:
                    found[node.name] = n
    return found


@pytest.mark.parametrize("path", PAGE_MODULES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_callbacks_with_many_outputs_return_them_by_name(path):
    """More than MAX_POSITIONAL_OUTPUTS outputs: Dash's dict outputs (output={name: Output}),
    never a positional tuple whose order must match the decorator's."""
    assert {f: n for f, n in positional_outputs(path).items() if n > MAX_POSITIONAL_OUTPUTS} == {}


def test_the_checkers_catch_what_they_should(tmp_path):
    page = tmp_path / "gui" / "pages" / "alpha"
    page.mkdir(parents=True)
    bad = page / "callbacks.py"
    bad.write_text("import sqlite3\nfrom . import layout\nfrom ..beta.callbacks import f\n"
                   "from ...components import job_status\nfrom ..base import Page\n"
                   "import yaml\ncfg = yaml.safe_load(path.read_text())\n")
    assert "sqlite3" in imported_modules(bad)
    assert gui_imports(bad, tmp_path) >= {"gui.pages.alpha.layout", "gui.pages.beta.callbacks.f",
                                "gui.components.job_status", "gui.pages.base.Page"}
    assert other_pages(bad, tmp_path) == {"beta"}
    assert [c.split(": ")[1] for c in io_calls(bad)] == ["safe_load(...)", "read_text(...)"]
    many = tmp_path / "many.py"
    many.write_text("@app.callback(Output('a', 'b'), *[Output(i, 'c') for i in x], Output('f', 'g'),"
                    " Input('d', 'e'))\n"
                    "def f(n):\n    pass\n"
                    "@app.callback(output=dict(a=Output('a', 'b')), inputs=[Input('d', 'e')])\n"
                    "def g(n):\n    pass\n")
    assert positional_outputs(many) == {"f": 3}


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


def ids_modules() -> list:
    """gui/ids.py (what several parts share) and each page's own ids.py."""
    import importlib
    return [importlib.import_module(module_name(p))
            for p in [GUI / "ids.py", *sorted((GUI / "pages").glob("*/ids.py"))]]


def test_no_component_id_is_used_twice(tmp_path):
    from gui.app import create_app
    modules = ids_modules()
    assert len(modules) == 17
    constants = [v for m in modules for k, v in vars(m).items() if k.isupper() and isinstance(v, str)]
    assert len(constants) > 230
    assert [v for v, n in Counter(constants).items() if n > 1] == []
    app = create_app(tmp_path / "runs", data_dir=tmp_path / "data")
    counts = id_counts(app.validation_layout.to_plotly_json())
    assert len(counts) > 300
    assert [i for i, n in counts.items() if n > 1] == []
