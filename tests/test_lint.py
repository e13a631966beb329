"""The code base passes ruff with the project's settings (pyproject.toml [tool.ruff])."""
import subprocess
import sys

from tests.conftest import ROOT


def test_ruff_is_clean():
    res = subprocess.run([sys.executable, "-m", "ruff", "check", "--output-format", "concise", "."],
                         cwd=ROOT, capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr
