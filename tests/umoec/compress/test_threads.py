"""Thread count and OpenMP wait policy for coding (umoec/compress/threads.py)."""
import os
import subprocess
import sys

import pytest

from umoec.compress import threads as T


def test_profile_count_when_the_cores_are_idle():
    p = T.plan(2, busy=0.1, cpus=2, env={})
    assert (p.threads, p.passive) == (2, False)


def test_one_sleeping_thread_when_another_process_uses_a_core():
    p = T.plan(2, busy=1.0, cpus=2, env={})
    assert (p.threads, p.passive) == (1, True)
    assert "busy" in p.reason


def test_never_more_threads_than_cpus():
    assert T.plan(8, busy=0.0, cpus=2, env={}).threads == 2
    assert T.plan(2, busy=0.0, cpus=1, env={}).threads == 1


def test_user_environment_is_respected():
    assert T.plan(2, busy=0.0, cpus=2, env={"OMP_NUM_THREADS": "1"}).threads == 1
    assert T.plan(2, busy=0.0, cpus=4, env={"OMP_NUM_THREADS": "junk"}).threads == 2
    p = T.plan(2, busy=0.0, cpus=2, env={"OMP_WAIT_POLICY": "passive"})
    assert (p.threads, p.passive) == (1, True)  # two sleeping threads measured slower than one


def test_a_fixed_count_is_kept_and_only_the_wait_policy_chosen():
    idle = T.plan(2, fixed=True, busy=0.0, cpus=2, env={"OMP_NUM_THREADS": "1"})
    assert (idle.threads, idle.passive) == (2, False)
    crowded = T.plan(2, fixed=True, busy=1.2, cpus=2, env={})
    assert (crowded.threads, crowded.passive) == (2, True)
    forced = T.plan(2, fixed=True, busy=1.2, cpus=2, env={"OMP_WAIT_POLICY": "ACTIVE"})
    assert forced.passive is False
    assert T.plan(1, fixed=True, busy=0.0, cpus=2, env={}).threads == 1


def test_busy_cores_is_a_real_measurement():
    assert 0.0 <= T.busy_cores(0.05) <= (os.cpu_count() or 1) + 0.01


def test_prepare_sets_passive_only_when_planned(monkeypatch):
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setattr(T, "busy_cores", lambda sample_s=T.SAMPLE_S: 0.0)
    monkeypatch.setattr(T, "available_cpus", lambda: 2)
    assert T.prepare(2).threads == 2 and "OMP_WAIT_POLICY" not in os.environ
    assert T.prepare(1).threads == 1 and os.environ["OMP_WAIT_POLICY"] == "PASSIVE"


def test_prepare_sets_the_engine_threads_and_one_blas_thread(monkeypatch):
    for var in (*T.BLAS_VARS, T.ENGINE_VAR, "OMP_WAIT_POLICY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("MKL_NUM_THREADS", "3")
    monkeypatch.setattr(T, "busy_cores", lambda sample_s=T.SAMPLE_S: 0.0)
    monkeypatch.setattr(T, "available_cpus", lambda: 2)
    T.prepare(2)
    assert os.environ[T.ENGINE_VAR] == "2" and os.environ["OPENBLAS_NUM_THREADS"] == "1"
    assert os.environ["MKL_NUM_THREADS"] == "3"                # the user's setting is kept
    T.prepare(1, fixed=True)                                   # an explicit -T wins
    assert os.environ[T.ENGINE_VAR] == "1"


@pytest.mark.parametrize("module", ["bin.compress", "bin.decompress", "bin.evaluate",
                                    "umoec.compress.worker"])
def test_entry_points_choose_before_numpy_loads(module):
    """OpenBLAS and OpenMP read their thread settings when numpy (or torch) loads: the entry points
    must not import either before choosing."""
    code = f"import sys, {module}; print('numpy' in sys.modules, 'torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "False False", out.stderr
