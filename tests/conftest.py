"""Shared fixtures: repository paths, a simulated run, and a headless Chromium for browser tests."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
ARTIFACTS = ROOT / "test-artifacts"


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def small_data(tmp_path_factory) -> Path:
    """A 400 kB byte dataset from the default corpus, prepared once for every test package."""
    from umoec.data import prepare
    out = tmp_path_factory.mktemp("data") / "small"
    prepare(out, max_bytes=400_000)
    return out


@pytest.fixture(scope="session")
def tiny_ckpt(tmp_path_factory, small_data) -> Path:
    """A tiny trained checkpoint (every component on, LoRA-capable), trained once per session."""
    from tests.umoec.train.conftest import tiny_args
    out = tmp_path_factory.mktemp("runs") / "tiny"
    res = run_module("bin.train", "--out", str(out), *tiny_args(small_data, 24), timeout=600)
    assert res.returncode == 0, res.stderr
    return out / "checkpoints" / "step000024.pt"


@pytest.fixture(scope="session")
def tiny_model(tiny_ckpt):
    """The coding model of `tiny_ckpt` (umoec.engine.modelfile.ModelFile)."""
    from umoec.engine.export import export_checkpoint
    return export_checkpoint(tiny_ckpt, name="tiny")


@pytest.fixture(scope="session")
def dask_cluster():
    """A local Dask cluster of two worker processes (one thread each), as `dask scheduler` and
    two `dask worker` would make; yields its scheduler address."""
    import logging

    from distributed import LocalCluster
    saved = dict(os.environ)
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                           dashboard_address=":0", silence_logs=logging.ERROR)
    # Its nanny writes OMP_NUM_THREADS=1, MALLOC_TRIM_THRESHOLD_=65536 (and more) into this
    # process's environment for good: every later subprocess (a trainer) would inherit them and
    # run at half speed, half its time trimming malloc's heap (80 tier1_micro steps: 20 -> 42 s).
    os.environ.clear()
    os.environ.update(saved)
    try:
        yield cluster.scheduler_address
    finally:
        cluster.close()


def run_module(module: str, *args: str, timeout: float = 120, env=None,
               cwd: Path = ROOT) -> subprocess.CompletedProcess:
    """Run `python -m module args...` from the repository root, capturing output."""
    full_env = {**os.environ, **(env or {})}
    full_env.pop("UMOEC_DEBUG", None)
    return subprocess.run([sys.executable, "-m", module, *args], cwd=cwd, env=full_env,
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="session")
def sim_run(tmp_path_factory) -> Path:
    """A completed 600-step simulated run (built once per test session)."""
    out = tmp_path_factory.mktemp("runs") / "sim600"
    res = run_module("bin.simulate_training", "--steps", "600", "--out", str(out), "--quiet")
    assert res.returncode == 0, res.stderr
    return out


@pytest.fixture(scope="session")
def browser():
    """Headless Debian Chromium through Playwright; skipped locally without it, fatal in CI."""
    if not Path(CHROMIUM).exists() or shutil.which("chromium") is None:
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM} is missing in CI: .ci/run must install Debian chromium")
        pytest.skip(f"browser tests need Debian chromium at {CHROMIUM} (apt-get install chromium)")
    from playwright.sync_api import sync_playwright
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()
