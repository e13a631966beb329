"""A .umc file decodes bit-exactly under any configuration: other SIMD kernels for numpy, other
BLAS kernels and thread counts, the int8 products on BLAS or on the compiled AVX2 loop, the
numpy references instead of the compiled loops, the mixing stage's Python reference instead of
its compiled loop, the products on PyTorch's CPU kernels at other SIMD levels
(UMOEC_ENGINE_DEVICE=cpu: without it the coder never imports torch, so PyTorch's settings cannot
touch a file), another process. Every configuration must also *write* byte-identical files (so
each can read every other's). Each configuration is one subprocess running portable_job.py,
whose report says what it really used."""
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT
from umoec.engine import modelfile as mf

JOB = Path(__file__).with_name("portable_job.py")
NO_AVX512 = "AVX512F AVX512CD AVX512_SKX AVX512_CLX AVX512_CNL AVX512_ICL AVX512_SPR"
TORCH_CPU = {"UMOEC_ENGINE_DEVICE": "cpu"}
JOB_TIMEOUT_S = 600


def has_flag(flag: str) -> bool:
    try:
        return f" {flag}" in Path("/proc/cpuinfo").read_text()
    except OSError:
        return False


CONFIGS = {
    # PyTorch's scalar, AVX2 (with MKL's AVX2) and, where the CPU has it, AVX-512 kernels doing
    # the products (forcing AVX-512 on a CPU without it would be an illegal instruction)
    "torch-default": {**TORCH_CPU, "ATEN_CPU_CAPABILITY": "default"},
    "torch-avx2": {**TORCH_CPU, "ATEN_CPU_CAPABILITY": "avx2", "MKL_ENABLE_INSTRUCTIONS": "AVX2"},
    **({"torch-avx512": {**TORCH_CPU, "ATEN_CPU_CAPABILITY": "avx512"}} if has_flag("avx512f") else {}),
    "numpy-no-avx512": {"NPY_DISABLE_CPU_FEATURES": NO_AVX512},
    "blas-haswell": {"OPENBLAS_CORETYPE": "Haswell"},
    "blas-sse": {"OPENBLAS_CORETYPE": "Prescott"},
    "threads-2": {"OPENBLAS_NUM_THREADS": "2", "OMP_NUM_THREADS": "2"},
    "threads-4": {"OPENBLAS_NUM_THREADS": "4", "OMP_NUM_THREADS": "4"},
    # the streams split over processes (split.py), as -T 2 codes turbo; these inputs are small
    "processes-2": {"UMOEC_ENGINE_THREADS": "2", "UMOEC_SPLIT_MIN_ROWS": "1"},
    "numpy-kernels": {"UMOEC_ENGINE_KERNELS": "numpy"},
    # the int8 products on float32 BLAS, and on the compiled AVX2 loop (not the CPU's best)
    "products-blas": {"UMOEC_MM8": "blas"},
    "products-avx2": {"UMOEC_MM8": "avx2"},
    "cm-reference": {"UMOEC_CM_KERNELS": "python"},   # the mixing stage's plain reference
}


@pytest.fixture(scope="module")
def setup(tmp_path_factory, tiny_model):
    root = tmp_path_factory.mktemp("portable")
    model = mf.write(tiny_model, root / "tiny.umm")
    inputs = root / "inputs"
    inputs.mkdir()
    (inputs / "text.py").write_bytes((ROOT / "umoec" / "engine" / "fixed.py").read_bytes()[:1000])
    (inputs / "binary.bin").write_bytes(bytes((i * 7919) % 251 for i in range(400)) + bytes(100))
    (inputs / "empty").write_bytes(b"")
    return root, model, inputs


def start_job(setup, name: str, env: dict, ref: str) -> subprocess.Popen:
    """One configuration's job; its output goes to files (a full pipe would block it)."""
    root, model, inputs = setup
    full = {**os.environ, "PYTHONPATH": str(ROOT), "OPENBLAS_NUM_THREADS": "1",
            "OMP_NUM_THREADS": "1", **env}
    with open(root / f"{name}.out", "w") as out, open(root / f"{name}.err", "w") as err:
        return subprocess.Popen([sys.executable, str(JOB), str(model), str(inputs),
                                 str(root / name), str(root / ref)], env=full, stdout=out,
                                stderr=err, text=True, cwd=ROOT)


def report_of(setup, name: str, proc: subprocess.Popen) -> dict:
    root = setup[0]
    proc.wait(timeout=JOB_TIMEOUT_S)
    assert proc.returncode == 0, f"{name}: {(root / f'{name}.err').read_text()[-2000:]}"
    return json.loads((root / f"{name}.out").read_text().strip().splitlines()[-1])


# the jobs that take longest (the plain references, torch's start-up), started first:
# cm-reference ~33 s, numpy-kernels ~22 s, a torch job ~12 s, the others ~3 s each
LONGEST = ("cm-reference", "numpy-kernels", "torch-default", "torch-avx2", "torch-avx512")


@pytest.fixture(scope="module")
def reports(setup) -> dict:
    """Every configuration's job, after the base job whose files they read: two at a time (each
    job is one thread, mostly start-up and the Python reference loops), the next one started as
    soon as either ends, so the module takes about half the time of one after another. A job's
    failure (or one past JOB_TIMEOUT_S, killed) is its own test's failure."""
    report_of(setup, "base", start_job(setup, "base", {}, "none"))
    waiting = sorted(CONFIGS, key=lambda n: LONGEST.index(n) if n in LONGEST else len(LONGEST))
    running, done = {}, {}
    try:
        while waiting or running:
            while waiting and len(running) < 2:
                name = waiting.pop(0)
                running[name] = (start_job(setup, name, CONFIGS[name], "base"), time.monotonic())
            for name, (proc, started) in list(running.items()):
                if proc.poll() is None and time.monotonic() - started > JOB_TIMEOUT_S:
                    proc.kill()                 # past its time: its test says so
                if proc.poll() is not None:
                    done[name] = running.pop(name)[0]
            time.sleep(0.05)
    finally:
        for proc, _ in running.values():   # only after a failure here: none left behind
            proc.kill()
    return done


@pytest.mark.parametrize("name", list(CONFIGS))
def test_every_configuration_reads_and_writes_the_same_files(setup, reports, name):
    root = setup[0]
    report = report_of(setup, name, reports[name])
    assert len(report["decoded"]) == 12                    # 3 inputs x 4 profiles
    for f in sorted((root / "base").glob("*.umc")):
        assert (root / name / f.name).read_bytes() == f.read_bytes(), f"{name}: {f.name} differs"
    if name.startswith("torch-"):
        assert report["device"] == "cpu"
        assert report["aten"] == CONFIGS[name]["ATEN_CPU_CAPABILITY"].upper()
    else:
        assert report["device"] is None and report["aten"] is None    # numpy products, no torch
    if name == "numpy-kernels":
        assert report["kernels"] == "numpy" and report["products"] == "blas"
    if name == "products-blas" or (name == "products-avx2" and has_flag("avx2")):
        assert report["products"] == name.removeprefix("products-")
    if name == "cm-reference":
        assert report["cm"] == "python"
    # processes share the streams only where asked (threads-2/4 set only the BLAS's threads)
    assert (report["children"] > 0) == (name == "processes-2")
