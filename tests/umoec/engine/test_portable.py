"""A .umc file decodes bit-exactly under any configuration: other SIMD kernels for numpy and
PyTorch, other BLAS kernels and thread counts, the numpy references instead of the compiled loops,
the mixing stage's Python reference instead of its compiled loop, another process. Every
configuration must also *write* byte-identical files (so each can read every other's). Each
configuration is one subprocess running portable_job.py."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT
from umoec.engine import modelfile as mf

JOB = Path(__file__).with_name("portable_job.py")
NO_AVX512 = "AVX512F AVX512CD AVX512_SKX AVX512_CLX AVX512_CNL AVX512_ICL AVX512_SPR"
CONFIGS = {
    "aten-default": {"ATEN_CPU_CAPABILITY": "default"},
    "aten-avx2": {"ATEN_CPU_CAPABILITY": "avx2"},
    "aten-avx512": {"ATEN_CPU_CAPABILITY": "avx512"},
    "mkl-avx2": {"MKL_ENABLE_INSTRUCTIONS": "AVX2"},
    "numpy-no-avx512": {"NPY_DISABLE_CPU_FEATURES": NO_AVX512},
    "blas-haswell": {"OPENBLAS_CORETYPE": "Haswell"},
    "blas-sse": {"OPENBLAS_CORETYPE": "Prescott"},
    "threads-2": {"OPENBLAS_NUM_THREADS": "2", "OMP_NUM_THREADS": "2"},
    "threads-4": {"OPENBLAS_NUM_THREADS": "4", "OMP_NUM_THREADS": "4"},
    "numpy-kernels": {"UMOEC_ENGINE_KERNELS": "numpy"},
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


def run_job(setup, name: str, env: dict, ref: str):
    root, model, inputs = setup
    full = {**os.environ, "PYTHONPATH": str(ROOT), "OPENBLAS_NUM_THREADS": "1",
            "OMP_NUM_THREADS": "1", **env}
    res = subprocess.run([sys.executable, str(JOB), str(model), str(inputs), str(root / name),
                          str(root / ref)], env=full, capture_output=True, text=True, timeout=600,
                         cwd=ROOT)
    assert res.returncode == 0, f"{name}: {res.stderr[-2000:]}"
    return json.loads(res.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def base(setup):
    return run_job(setup, "base", {}, "none")


@pytest.mark.parametrize("name", list(CONFIGS))
def test_every_configuration_reads_and_writes_the_same_files(setup, base, name):
    root = setup[0]
    report = run_job(setup, name, CONFIGS[name], "base")
    assert len(report["decoded"]) == 12                    # 3 inputs x 4 profiles
    for f in sorted((root / "base").glob("*.umc")):
        assert (root / name / f.name).read_bytes() == f.read_bytes(), f"{name}: {f.name} differs"
    if name == "numpy-kernels":
        assert report["kernels"] == "numpy"
    if name == "cm-reference":
        assert report["cm"] == "python"
