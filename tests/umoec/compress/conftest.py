"""A tiny trained checkpoint (every component on, LoRA-capable) shared by the compressor tests."""
import pytest

from tests.conftest import run_module
from tests.umoec.train.conftest import tiny_args


@pytest.fixture(scope="session")
def tiny_ckpt(tmp_path_factory, small_data):
    out = tmp_path_factory.mktemp("runs") / "tiny"
    res = run_module("bin.train", "--out", str(out), *tiny_args(small_data, 24), timeout=600)
    assert res.returncode == 0, res.stderr
    return out / "checkpoints" / "step000024.pt"
