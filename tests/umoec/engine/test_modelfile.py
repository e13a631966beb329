"""Model files: round trip, identity hash, and every way a file can be unusable."""
import json
import struct

import numpy as np
import pytest

from umoec.engine import ENGINE_VERSION
from umoec.engine import modelfile as mf


@pytest.fixture
def saved(tiny_model, tmp_path):
    return mf.write(tiny_model, tmp_path / "tiny.umm")


def test_round_trip_keeps_every_tensor_and_the_hash(tiny_model, saved):
    back = mf.read(saved)
    assert back.hash == tiny_model.hash and back.name == "tiny" and back.engine == ENGINE_VERSION
    assert back.tensors.keys() == tiny_model.tensors.keys()
    assert all((back.tensors[k] == v).all() and back.tensors[k].dtype == v.dtype
               for k, v in tiny_model.tensors.items())
    d = mf.describe(saved)
    assert (d["name"], d["hash"], d["bytes"]) == ("tiny", tiny_model.hash, saved.stat().st_size)


def test_the_hash_is_the_content_not_the_name(tiny_model):
    renamed = mf.make("another-name", tiny_model.config, tiny_model.tensors, {"description": "x"})
    assert renamed.hash == tiny_model.hash
    t = dict(tiny_model.tensors)
    t["heads.final_norm"] = t["heads.final_norm"] + 1
    assert mf.make("tiny", tiny_model.config, t).hash != tiny_model.hash
    cfg = json.loads(json.dumps(tiny_model.config))
    cfg["cascade"]["threshold"] = 0.5
    assert mf.make("tiny", cfg, tiny_model.tensors).hash != tiny_model.hash


def test_safetensors_library_reads_it(saved):
    st = pytest.importorskip("safetensors.numpy")
    loaded = st.load(saved.read_bytes())
    assert (loaded["embed.byte"] == mf.read(saved).tensors["embed.byte"]).all()


def test_a_damaged_tensor_is_refused_and_named(saved):
    raw = bytearray(saved.read_bytes())
    raw[-10] ^= 0x40
    saved.write_bytes(bytes(raw))
    with pytest.raises(mf.ModelFileError, match=f"{saved}.*damaged.*hash"):
        mf.read(saved)


@pytest.mark.parametrize("cut", [0, 7, 100, -1])
def test_truncated_files_are_refused(saved, cut):
    raw = saved.read_bytes()
    saved.write_bytes(raw[:cut] if cut >= 0 else raw[:-1])
    with pytest.raises(mf.ModelFileError, match=str(saved)):
        mf.read(saved)


def _with_meta(saved, **changes):
    raw = saved.read_bytes()
    (n,) = struct.unpack_from("<Q", raw)
    header = json.loads(raw[8:8 + n])
    header["__metadata__"].update(changes)
    blob = json.dumps(header).encode()
    blob += b" " * (-len(blob) % 8)
    saved.write_bytes(struct.pack("<Q", len(blob)) + blob + raw[8 + n:])


def test_other_safetensors_and_newer_engines_are_refused(saved):
    _with_meta(saved, engine=str(ENGINE_VERSION + 1))
    with pytest.raises(mf.ModelFileError, match=f"engine v{ENGINE_VERSION + 1}.*upgrade"):
        mf.read(saved)
    _with_meta(saved, format="something-else")
    with pytest.raises(mf.ModelFileError, match="not a u-moec-tiny coding model"):
        mf.read(saved)


def test_names_are_checked():
    for bad in ["", "a b", "../x", "-lead", "x" * 65]:
        with pytest.raises(mf.ModelFileError):
            mf.check_name(bad)
    assert mf.check_name("general-v1.2_b") == "general-v1.2_b"


def test_export_is_deterministic(tiny_ckpt, tiny_model):
    from umoec.engine.export import export_checkpoint
    again = export_checkpoint(tiny_ckpt, name="again")
    assert again.hash == tiny_model.hash
    assert again.info["source"]["step"] == 24 and again.info["corpus"]["train_bytes"] > 0
    q = again.tensors["heads.unembed.q"]
    assert q.dtype == np.int8 and np.abs(q).max() == 127
