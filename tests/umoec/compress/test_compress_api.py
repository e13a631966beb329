"""The compressor round-trips bit-exactly with a coding model, finds the model a file names, and
refuses what it cannot decode exactly, saying why."""
import hashlib
import os

import pytest

from tests.conftest import ROOT, run_module
from umoec.codec import read_header
from umoec.codec.errors import FormatError
from umoec.compress.api import (
    ModelError,
    compress_bytes,
    compress_path,
    decompress_bytes,
    decompress_path,
    export_for,
)
from umoec.engine import modelfile as mf

TEXT = (b"def roundtrip(data):\n    return decompress(compress(data)) == data\n" * 40)


def roundtrip(tmp_path, data, model, profile):
    src, umc, out = tmp_path / "in.bin", tmp_path / "in.umc", tmp_path / "out.bin"
    src.write_bytes(data)
    res = compress_path(src, umc, model, profile=profile)
    back = decompress_path(umc, out, model)
    assert out.read_bytes() == data
    return res, back


@pytest.mark.parametrize("profile", ["turbo", "fast", "balanced"])
def test_every_profile_round_trips(tmp_path, tiny_model, profile):
    res, back = roundtrip(tmp_path, TEXT, tiny_model, profile)
    assert res.profile == profile and res.stats.raw_bytes == len(TEXT)
    assert back.stats.packed_bytes == res.stats.packed_bytes
    assert res.model_hash == tiny_model.hash and "tiny" in res.model


@pytest.mark.parametrize("size", [0, 1, 15, 16, 17, 255, 256, 257, 5000])
def test_sizes_around_the_stream_count(tmp_path, tiny_model, size):
    data = bytes((i * 37 + 11) % 256 for i in range(size))
    roundtrip(tmp_path, data, tiny_model, "turbo" if size > 200 else "balanced")


def test_small_inputs_get_fewer_streams(tiny_model):
    for size, want in ((100, 1), (3000, 11), (100_000, 256)):
        assert read_header(compress_bytes(bytes(size), tiny_model, profile="turbo")).streams \
            == want


def test_random_and_zero_bytes(tmp_path, tiny_model):
    roundtrip(tmp_path, os.urandom(700), tiny_model, "turbo")
    roundtrip(tmp_path, bytes(700), tiny_model, "fast")


def test_compresses_text_it_was_trained_on_below_8_bits(tmp_path, tiny_model):
    res, _ = roundtrip(tmp_path, TEXT, tiny_model, "balanced")
    assert res.stats.bpb < 8.0


def test_tampered_file_is_refused_and_nothing_is_written(tmp_path, tiny_model):
    src, umc, out = tmp_path / "in.bin", tmp_path / "in.umc", tmp_path / "out.bin"
    src.write_bytes(TEXT)
    compress_path(src, umc, tiny_model, profile="fast")
    blob = bytearray(umc.read_bytes())
    blob[-5] ^= 0x40
    umc.write_bytes(bytes(blob))
    with pytest.raises(FormatError, match=r"corrupted .umc file: block 0 .* CRC32"):
        decompress_path(umc, out, tiny_model)
    assert not out.exists()
    umc.write_bytes(bytes(blob[: len(blob) // 2]))
    with pytest.raises(FormatError, match="truncated"):
        decompress_path(umc, out, tiny_model)
    assert not out.exists()


def test_the_model_is_found_by_hash_and_a_wrong_one_is_named(tmp_path, tiny_model, monkeypatch):
    blob = compress_bytes(TEXT, tiny_model, profile="fast")
    store = tmp_path / "models"
    monkeypatch.setenv("UMOEC_MODEL_PATH", str(store))
    monkeypatch.setenv("UMOEC_RUNS_DIR", str(tmp_path / "runs"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    with pytest.raises(ModelError, match=f"needs model tiny .hash {tiny_model.hash[:16]}.*"
                                         f"{store}.*umc model import"):
        decompress_bytes(blob)
    mf.write(tiny_model, store / "anywhere.umm")
    assert decompress_bytes(blob) == TEXT                    # found by hash, any file name
    from umoec.engine import store as S
    with pytest.raises(ModelError, match=f"written with model tiny .{tiny_model.hash[:12]}.; "
                                         f"the given model is {S.resolve(None).name}"):
        decompress_bytes(blob, "default")


def test_a_checkpoint_is_exported_next_to_its_run_and_reused(tmp_path, tiny_ckpt, tiny_model):
    m = export_for(tiny_ckpt)
    target = tiny_ckpt.parent.parent / "models" / "step000024.umm"
    assert m.hash == tiny_model.hash and target.is_file()
    mtime = target.stat().st_mtime_ns
    assert export_for(tiny_ckpt).hash == m.hash and target.stat().st_mtime_ns == mtime
    with pytest.raises(ModelError, match=r"nope.pt does not exist"):
        export_for(tmp_path / "nope.pt")


def test_cli_summary_and_errors(tmp_path, tiny_ckpt, tiny_model):
    src = tmp_path / "in.txt"
    src.write_bytes(TEXT)
    env = {"UMOEC_RUNS_DIR": str(tiny_ckpt.parent.parent.parent),
           "XDG_DATA_HOME": str(tmp_path / "xdg")}
    res = run_module("bin.compress", str(src), str(tmp_path / "a.umc"), "--checkpoint",
                     str(tiny_ckpt), "--profile", "fast", "--threads", "1", timeout=300, env=env)
    assert res.returncode == 0, res.stderr
    assert "bpb" in res.stdout and "B/s" in res.stdout and tiny_model.hash[:12] in res.stdout
    res = run_module("bin.decompress", str(tmp_path / "a.umc"), str(tmp_path / "b.txt"),
                     timeout=300, env=env)             # the model is found in the runs folder
    assert res.returncode == 0 and "sha256 verified" in res.stdout, res.stderr
    assert hashlib.sha256((tmp_path / "b.txt").read_bytes()).digest() == \
        hashlib.sha256(TEXT).digest()
    res = run_module("bin.decompress", str(src), str(tmp_path / "c.txt"), timeout=300, env=env)
    assert res.returncode == 2 and "Traceback" not in res.stderr and not (tmp_path / "c.txt").exists()
    res = run_module("bin.compress", str(tmp_path / "missing"), str(tmp_path / "d.umc"),
                     timeout=300, env=env)
    assert res.returncode == 2 and "cannot read input file" in res.stderr
    res = run_module("bin.compress", str(src), str(tmp_path / "d.umc"), "--model", "nope",
                     timeout=300, env=env)
    assert res.returncode == 2 and "no model named or hashed 'nope'" in res.stderr


def test_the_default_model_needs_no_training(tmp_path):
    """Right after install: the shipped model compresses and decodes with nothing else given."""
    src, umc, out = tmp_path / "r.md", tmp_path / "r.umc", tmp_path / "back.md"
    src.write_bytes(TEXT[:1200])
    res = compress_path(src, umc, profile="fast")
    assert res.stats.bpb < 6.0, res.stats.summary()
    decompress_path(umc, out)
    assert out.read_bytes() == src.read_bytes()


def test_match_model_travels_in_the_header_and_pays_on_repeats(tmp_path, tiny_model):
    """entropy.match_min_len (default 5) is stored in the header; the decoder follows it. A random
    100-byte block repeated: the repeats cost nearly nothing (the match model, and the mixing
    stage's order-6 contexts, which now catch a 100-byte period on their own too)."""
    from umoec import config as C
    off = C.build(C.apply_overrides(C.to_dict(tiny_model.build_config()),
                                    ["entropy.match_min_len=0"]), "test")
    data = hashlib.sha256(b"block").digest() * 3 + hashlib.sha256(b"tail").digest()[:4]
    data = data * 90                                      # 9,000 bytes, 100-byte period
    sizes = {}
    for name, cfg in (("on", None), ("off", off)):
        blob = compress_bytes(data, tiny_model, config=cfg, profile="balanced")
        sizes[name] = len(blob)
        assert read_header(blob).metadata["match_min_len"] == (5 if name == "on" else 0)
        assert decompress_bytes(blob, tiny_model) == data
    assert sizes["on"] <= sizes["off"] and sizes["on"] < 0.05 * len(data), sizes


@pytest.mark.parametrize("value", [1, 33, 255, -1, "x"])
def test_a_header_match_length_the_match_model_refuses_is_a_format_error(tiny_model, value):
    """A header (its CRC valid) whose match_min_len the match model cannot use (it needs 0, or
    2 .. its 32-byte check) is a damaged file, not a crash (found by the metadata fuzzer)."""
    from dataclasses import replace

    from umoec.codec.container import pack_header, parse_header
    data = b"a header that lies about its match model " * 20
    blob = compress_bytes(data, tiny_model, profile="turbo")
    header, offset = parse_header(blob)
    bad = pack_header(replace(header, metadata={**header.metadata, "match_min_len": value}))
    with pytest.raises(FormatError, match="bad header metadata"):
        decompress_bytes(bad + blob[offset:], tiny_model)


@pytest.mark.parametrize("value", [1, 5000, "x", None, 13])
def test_a_header_record_length_that_is_not_the_encoders_is_refused(value):
    """Version 16's record length comes from the header: one out of range or not a number is a
    damaged header; another length in range is caught by the fingerprint, which names it."""
    from dataclasses import replace

    from umoec.codec.container import pack_header, parse_header
    from umoec.codec.errors import FingerprintMismatch
    blob = (ROOT / "tests/umoec/engine/golden/format3/records.bin.cm-mix16.umc").read_bytes()
    header, offset = parse_header(blob)
    bad = pack_header(replace(header, metadata={**header.metadata, "record": value}))
    with pytest.raises(FingerprintMismatch if value == 13 else FormatError,
                       match="fingerprint" if value == 13 else "bad header metadata"):
        decompress_bytes(bad + blob[offset:])
