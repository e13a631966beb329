"""Subprocesses get argument lists, never a shell: a static check of the source."""
import ast

from tests.conftest import ROOT

PACKAGES = ("umoec", "gui", "bin", "bench", "scripts")
SPAWNERS = {"run", "Popen", "call", "check_call", "check_output"}


def sources():
    for pkg in PACKAGES:
        yield from (ROOT / pkg).rglob("*.py") if (ROOT / pkg).exists() else ()


def test_no_shell_true_os_system_or_string_commands():
    problems = []
    for path in sources():
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            fn = node.func
            name = fn.attr if isinstance(fn, ast.Attribute) else getattr(fn, "id", "")
            owner = getattr(fn.value, "id", "") if isinstance(fn, ast.Attribute) else ""
            where = f"{path.relative_to(ROOT)}:{node.lineno}"
            if (owner == "os" and name in ("system", "popen")) or name in ("getoutput",
                                                                        "getstatusoutput"):
                problems.append(f"{where}: {owner}.{name}")
            for kw in node.keywords:
                if kw.arg == "shell" and not (isinstance(kw.value, ast.Constant)
                                              and kw.value.value is False):
                    problems.append(f"{where}: shell=...")
            if owner == "subprocess" and name in SPAWNERS and node.args:
                first = node.args[0]
                if isinstance(first, (ast.Constant, ast.JoinedStr, ast.BinOp)):
                    problems.append(f"{where}: command given as a string")
    assert problems == []


def test_yaml_and_torch_loading_are_safe():
    problems = []
    for path in sources():
        text = path.read_text()
        for i, line in enumerate(text.splitlines(), 1):
            if "yaml.load(" in line or "yaml.unsafe_load" in line:
                problems.append(f"{path}:{i}")
            if "torch.load(" in line and "weights_only=True" not in line:
                problems.append(f"{path}:{i}")
    assert problems == []
