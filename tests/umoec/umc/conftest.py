"""Fixtures of the umc tests: the installed `umc` run in a private folder, with the model store
($XDG_DATA_HOME) and the runs folder redirected into tmp_path, so the user's store is never
touched; small inputs (the coding engine runs at a few kB/s)."""
from __future__ import annotations

import os
import random
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import ROOT, run_module
from tests.umoec.train.conftest import tiny_args

SCRIPT = Path(sys.executable).with_name("umc")
COMMAND = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "umoec.umc.main"]

TEXT = (ROOT / "umoec" / "cli.py").read_bytes()[:1500]           # text the model knows
_rng = random.Random(7)
BINARY = bytes(_rng.randrange(256) for _ in range(300)) + bytes(100) + b"\xff\xfe" * 50


@dataclass
class Result:
    rc: int
    out: bytes
    err: str

    @property
    def lines(self) -> list[str]:
        return self.err.splitlines()


class Umc:
    """`umc ARGS` in `cwd` with a private model store; stdin is empty unless given."""

    def __init__(self, cwd: Path, env: dict):
        self.cwd, self.env = cwd, env

    def __call__(self, *args: str, stdin: bytes = b"", env: dict | None = None,
                 timeout: float = 120) -> Result:
        res = subprocess.run(COMMAND + list(args), cwd=self.cwd, env={**self.env, **(env or {})},
                             input=stdin, capture_output=True, timeout=timeout)
        err = res.stderr.decode("utf-8", "replace")
        if "--debug" not in args:
            assert "Traceback" not in err, err   # errors are one line, never a traceback
        return Result(res.returncode, res.stdout, err)

    def popen(self, *args: str, **kw) -> subprocess.Popen:
        return subprocess.Popen(COMMAND + list(args), cwd=self.cwd, env=self.env, **kw)

    def write(self, name: str, data: bytes) -> Path:
        path = self.cwd / name
        path.write_bytes(data)
        return path


@pytest.fixture
def umc(tmp_path) -> Umc:
    work = tmp_path / "work"
    work.mkdir()
    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path / "xdg"),
           "UMOEC_RUNS_DIR": str(tmp_path / "runs"), "OMP_NUM_THREADS": "1"}
    for var in ("UMOEC_DEBUG", "UMOEC_MODEL_PATH", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env.pop(var, None)
    return Umc(work, env)


@pytest.fixture(scope="session")
def default_model():
    """The shipped default model's store entry (its name and hash change when it is replaced)."""
    from umoec.engine import store
    return store.resolve(None)


@pytest.fixture(scope="session")
def packed(tmp_path_factory) -> Path:
    """TEXT compressed once with the default model, profile fast (copy it before damaging it)."""
    folder = tmp_path_factory.mktemp("packed")
    (folder / "text.txt").write_bytes(TEXT)
    # a subprocess: numpy in this process may run more BLAS threads than there are idle cores
    res = subprocess.run(COMMAND + ["-q", "--profile", "fast", "text.txt"], cwd=folder,
                         env={**os.environ, "OMP_NUM_THREADS": "1"}, capture_output=True, timeout=120)
    assert res.returncode == 0, res.stderr
    return folder / "text.txt.umc"


def variant(name: str, which: int):
    """A different model (one weight changed by one step, so another hash) named `name`."""
    from umoec.engine import modelfile as mf
    from umoec.engine import store
    base = mf.read(store.DEFAULT_FILE)
    tensors = dict(base.tensors)
    key = sorted(k for k, v in tensors.items() if v.dtype.kind == "i" and v.size > which)[0]
    t = tensors[key].copy()
    t.flat[which] += 1 if t.flat[which] < 100 else -1
    tensors[key] = t
    return mf.make(name, base.config, tensors, base.info)


@pytest.fixture(scope="session")
def tiny_run(tmp_path_factory, small_data) -> Path:
    """A run folder of a 4-step training of the tiny tier-1 model (a few seconds)."""
    out = tmp_path_factory.mktemp("runs") / "tiny"
    res = run_module("bin.train", "--out", str(out), *tiny_args(small_data, 4), timeout=600)
    assert res.returncode == 0, res.stderr
    return out
