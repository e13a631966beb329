"""A tiny really-trained run (bin.train, the tests/umoec/train tiny config), built once per test
process and shared by the playground unit tests and the Generate tab's browser test."""
from __future__ import annotations

import atexit
import shutil
import tempfile
import threading
from pathlib import Path

from tests.conftest import run_module
from tests.umoec.train.conftest import tiny_args

STEPS = 24
_lock = threading.Lock()
_built: dict[str, Path] = {}


def tiny_trained_run() -> Path:
    """A run folder with checkpoints/step000024.pt (a few seconds of CPU training, once)."""
    with _lock:
        if "run" not in _built:
            from umoec.data import prepare
            base = Path(tempfile.mkdtemp(prefix="umoec-playground-"))
            atexit.register(shutil.rmtree, base, True)
            prepare(base / "data", max_bytes=400_000)
            out = base / "tiny"
            res = run_module("bin.train", "--out", str(out), *tiny_args(base / "data", STEPS),
                             timeout=600)
            assert res.returncode == 0, res.stderr
            _built["run"] = out
        return _built["run"]


def copy_run(dest: Path) -> Path:
    """A copy of the trained run at `dest` (a cockpit's runs folder entry)."""
    shutil.copytree(tiny_trained_run(), dest)
    return dest
