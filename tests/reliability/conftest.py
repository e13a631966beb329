"""Fixtures of the reliability suite: a small dataset, one tiny trained run, the CI/full switch.

CI mode (default) keeps the suite to a couple of minutes on 2 cores; `UMOEC_RELIABILITY_FULL=1`
runs the full counts that docs/reliability.md reports (20 kills, >= 10,000 .umc cases, 60 s of
concurrent reading...). Every test writes its figures to test-artifacts/reliability/<name>.json.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conftest import ARTIFACTS, run_module
from tests.reliability.helpers import ONE_THREAD, kill_leftovers, train_args

FULL = os.environ.get("UMOEC_RELIABILITY_FULL") == "1"


def full_or_ci(full, ci):
    """The full-mode figure under UMOEC_RELIABILITY_FULL=1, else the CI one."""
    return full if FULL else ci


def record(name: str, figures: dict) -> None:
    """Keep a test's figures (cases, survived, timings) for docs/reliability.md."""
    out = ARTIFACTS / "reliability"
    out.mkdir(parents=True, exist_ok=True)
    figures = {"mode": "full" if FULL else "ci", **figures}
    (out / f"{name}{'-full' if FULL else ''}.json").write_text(json.dumps(figures, indent=1) + "\n")


@pytest.fixture(scope="session")
def tiny_run(tmp_path_factory, small_data) -> Path:
    """A trained 8-step tiny run (checkpoints at steps 4 and 8), alone in its runs folder."""
    out = tmp_path_factory.mktemp("rel-runs") / "tiny"
    res = run_module("bin.train", *train_args(out, small_data, 8, "logging.save_every=4"),
                     timeout=600, env=ONE_THREAD)
    assert res.returncode == 0, res.stderr
    return out


@pytest.fixture(autouse=True)
def no_leftover_processes():
    """A failing test must not leave a trainer running (they are started for 10**6 steps)."""
    yield
    kill_leftovers()
