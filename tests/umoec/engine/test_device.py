"""The engine's products on a torch device (UMOEC_ENGINE_DEVICE): the same integers as numpy, so
files decode and are written byte for byte as without it. Here torch's CPU device stands in for
a GPU (the code path is the same but for the copy to the card); scripts/gpu_check.sh runs the
CUDA case on a GPU machine (docs/engine.md has its result)."""
import os
import subprocess
import sys

import numpy as np
import pytest

from tests.conftest import ROOT
from tests.umoec.engine.test_golden import GOLDEN, original_of, same_coding, stage_of
from umoec.codec import cm, read_header
from umoec.compress.api import compress_bytes, decompress_bytes
from umoec.engine import device
from umoec.engine import modelfile as mf
from umoec.engine.fixed import CHUNK_K, bmatmul8, matmul8

# network profiles: plain rANS and the mixing stage's version 4 (read only), its current version
# plain and primed in container formats 2 and 3 (also written again)
FILES = ["source.txt.turbo.umc", "source.txt.balanced.umc", "binary.bin.fast.umc",
         "source.txt.fast-mix4.umc", "source.txt.fast-mix6.umc", "format3/source.txt.balanced-mix6.umc",
         "source.txt.turbo-primed7.umc", "format3/source.txt.turbo-primed14.umc"]


@pytest.fixture
def on_torch(monkeypatch):
    monkeypatch.setenv(device.ENV, "cpu")
    assert device.refresh() is not None and device.products().name == "cpu"
    yield
    monkeypatch.delenv(device.ENV)
    assert device.refresh() is None and device.products() is None


@pytest.mark.parametrize("K", [1, 37, CHUNK_K, CHUNK_K + 1, 3 * CHUNK_K + 5])
def test_the_device_products_are_numpys_integers(monkeypatch, K):
    rng = np.random.default_rng(K)
    x = rng.integers(-127, 128, (9, K)).astype(np.float32)
    w = rng.integers(-127, 128, (K, 11)).astype(np.float32)
    x[0], w[:, 0] = 127, 127                       # the largest sums the format allows
    x[1], w[:, 1] = -127, 127
    want = matmul8(x, w)
    monkeypatch.setenv(device.ENV, "cpu")
    assert device.products() is None            # read at the start of a coding, not per product
    device.refresh()
    got = matmul8(x, w)
    assert got.dtype == want.dtype and np.array_equal(got, want)
    assert float(got[0, 0]) == 127 * 127 * K
    if K <= CHUNK_K:
        xb, wb = np.stack([x, -x]), np.stack([w, w[::-1]])
        monkeypatch.delenv(device.ENV)
        device.refresh()
        want = bmatmul8(xb, wb)
        monkeypatch.setenv(device.ENV, "cpu")
        device.refresh()
        assert np.array_equal(bmatmul8(xb, wb), want) and bmatmul8(xb, wb).dtype == np.float32
    monkeypatch.delenv(device.ENV)
    device.refresh()


def test_weights_are_copied_to_the_device_once(on_torch):
    w = np.ones((4, 3), np.float32)
    dev = device.products()
    matmul8(np.ones((2, 4), np.float32), w)
    first = dev._weight(w)
    matmul8(np.ones((5, 4), np.float32), w)
    assert dev._weight(w) is first


@pytest.mark.parametrize("name", FILES)
def test_golden_files_decode_and_encode_identically_with_device_products(on_torch, name):
    model = mf.read(GOLDEN / ("tiny-primed.umm" if "primed" in name else "tiny.umm"))
    blob = (GOLDEN / name).read_bytes()
    original = original_of(name)
    assert decompress_bytes(blob, model) == original
    if stage_of(name) in (cm.VERSION, cm.PRIMED):
        assert same_coding(compress_bytes(original, model, profile=read_header(blob).profile), blob)


def test_a_device_that_cannot_be_used_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.setenv(device.ENV, "no-such-device")
    with pytest.raises(device.DeviceError, match="UMOEC_ENGINE_DEVICE=no-such-device"):
        device.refresh()
    monkeypatch.delenv(device.ENV)
    assert device.refresh() is None
    src = tmp_path / "a.txt"
    src.write_bytes(b"some text " * 50)
    import torch
    name = "no-such-device" if torch.cuda.is_available() else "cuda"
    res = subprocess.run([sys.executable, "-m", "umoec.umc.main", "--model",
                          str(GOLDEN / "tiny.umm"), str(src)], cwd=ROOT, capture_output=True,
                         text=True, timeout=120, env={**os.environ, device.ENV: name})
    assert res.returncode == 2, res.stderr
    assert f"UMOEC_ENGINE_DEVICE={name}" in res.stderr and "Traceback" not in res.stderr
    assert not (tmp_path / "a.txt.umc").exists()


def test_the_gpu_checks_verify_reads_back_files_written_elsewhere(tmp_path):
    """scripts/gpu_check.py verify: the reverse direction of the GPU machine's check (its tar of
    files written there with CUDA products, decoded here); a wrong file is reported, not passed."""
    import io
    import tarfile

    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import gpu_check
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    data = gpu_check._inputs()["source.txt"]
    good = compress_bytes(data, gpu_check._model("default"), profile="turbo")
    other = compress_bytes(data[:-1], gpu_check._model("default"), profile="turbo")
    for name, blob, want in (("ok.tar", good, True), ("bad.tar", other, False)):
        with tarfile.open(tmp_path / name, "w") as tar:
            info = tarfile.TarInfo("source.txt.turbo.umc")
            info.size = len(blob)
            tar.addfile(info, io.BytesIO(blob))
        assert gpu_check.verify(tmp_path / name) is want
