"""A model's primer: stored in the model file under its hash, learned by the mixing stage before
each file on both sides (files of the primer's kind get smaller), and refused cleanly when it
cannot be read or when the file needs another model."""
import lzma

import numpy as np
import pytest

from tests.conftest import ROOT
from umoec.codec import cm, read_header
from umoec.compress.api import ModelError, compress_bytes, decompress_bytes
from umoec.engine import modelfile as mf
from umoec.engine import primer

SOURCE = (ROOT / "umoec" / "codec" / "cm.py").read_bytes()
PRIMER, TEST = SOURCE[:12000], SOURCE[12000:15000]


@pytest.fixture(scope="module")
def primed(tiny_model):
    return primer.attach(tiny_model, PRIMER)


def test_the_primer_is_part_of_the_model_and_survives_its_file(tiny_model, primed, tmp_path):
    assert primed.hash != tiny_model.hash and primed.name == tiny_model.name
    assert primed.info["primer"]["bytes"] == len(PRIMER)
    assert primer.text_of(primed) == PRIMER and primer.text_of(tiny_model) == b""
    back = mf.read(mf.write(primed, tmp_path / "p.umm"))
    assert back.hash == primed.hash and primer.text_of(back) == PRIMER
    # stored compressed: the model grows by much less than the text
    assert primed.tensors[primer.TENSOR].size < len(PRIMER) / 2
    assert primer.attach(primed, PRIMER).hash == primed.hash      # replacing, not stacking


def test_primer_size_limits(tiny_model):
    with pytest.raises(mf.ModelFileError, match="1 to"):
        primer.attach(tiny_model, b"")
    with pytest.raises(mf.ModelFileError, match="1 to"):
        primer.attach(tiny_model, b"x" * (primer.MAX_BYTES + 1))


def test_primed_files_round_trip_are_smaller_and_need_the_primed_model(tiny_model, primed):
    cm.forget()
    plain = compress_bytes(TEST, tiny_model, profile="fast")
    blob = compress_bytes(TEST, primed, profile="fast")
    assert len(blob) < len(plain) * 0.9, (len(blob), len(plain))
    assert read_header(blob).model_hash.hex() == primed.hash
    cm.forget()                                    # a decoder in a new process primes afresh
    assert decompress_bytes(blob, primed) == TEST
    with pytest.raises(ModelError, match="written with model"):
        decompress_bytes(blob, tiny_model)



def test_the_cm_profile_uses_a_primer_and_only_then_names_the_model(tiny_model, primed):
    free = compress_bytes(TEST, None, profile="cm")
    assert compress_bytes(TEST, tiny_model, profile="cm") == free   # no primer: model-free
    assert not any(read_header(free).model_hash)
    cm.forget()
    blob = compress_bytes(TEST, primed, profile="cm")
    header = read_header(blob)
    assert header.model_hash.hex() == primed.hash and header.profile == "cm"
    # (how much depends on how alike the primer and the text are: 19-20% on cm.py's)
    assert len(blob) < 0.85 * len(free), (len(blob), len(free))
    cm.forget()
    assert decompress_bytes(blob, primed) == TEST
    with pytest.raises(ModelError, match="written with model"):
        decompress_bytes(blob, tiny_model)
    # several frames: each primed the same, decoded in worker processes with the model
    big = TEST * 4
    blob = compress_bytes(big, primed, profile="cm", frame_bytes=4096, workers=2)
    assert decompress_bytes(blob, primed, workers=2) == big


def test_an_unreadable_primer_is_a_clear_model_error(tiny_model):
    tensors = dict(tiny_model.tensors)
    tensors[primer.TENSOR] = np.frombuffer(b"not xz at all", dtype=np.uint8).copy()
    bad = mf.make("bad", tiny_model.config, tensors)     # its hash vouches for these bytes
    with pytest.raises(ModelError, match="primer cannot be read"):
        compress_bytes(TEST, bad, profile="fast")
    tensors[primer.TENSOR] = np.frombuffer(lzma.compress(b""), dtype=np.uint8).copy()
    with pytest.raises(ModelError, match="holds 0 bytes"):
        compress_bytes(TEST, mf.make("empty", tiny_model.config, tensors), profile="fast")
