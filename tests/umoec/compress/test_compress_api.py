"""The neural compressor round-trips bit-exactly, and refuses what it cannot decode exactly."""
import hashlib
import os

import pytest

from tests.conftest import run_module
from umoec.codec.errors import CodecError, FingerprintMismatch, FormatError, IntegrityError
from umoec.compress.api import compress_path, decompress_path

TEXT = (b"def roundtrip(data):\n    return decompress(compress(data)) == data\n" * 40)


def roundtrip(tmp_path, data, ckpt, profile):
    src, umc, out = tmp_path / "in.bin", tmp_path / "in.umc", tmp_path / "out.bin"
    src.write_bytes(data)
    res = compress_path(src, umc, ckpt, profile=profile, threads=1)
    back = decompress_path(umc, out, ckpt)
    assert out.read_bytes() == data
    return res, back


@pytest.mark.parametrize("profile", ["turbo", "fast", "balanced"])
def test_every_profile_round_trips(tmp_path, tiny_ckpt, profile):
    res, back = roundtrip(tmp_path, TEXT, tiny_ckpt, profile)
    assert res.profile == profile and res.stats.raw_bytes == len(TEXT)
    assert back.stats.packed_bytes == res.stats.packed_bytes


@pytest.mark.parametrize("size", [0, 1, 15, 16, 17, 255, 256, 257])
def test_sizes_around_the_stream_count(tmp_path, tiny_ckpt, size):
    data = bytes((i * 37 + 11) % 256 for i in range(size))
    roundtrip(tmp_path, data, tiny_ckpt, "fast" if size > 200 else "balanced")


def test_random_and_zero_bytes(tmp_path, tiny_ckpt):
    roundtrip(tmp_path, os.urandom(700), tiny_ckpt, "turbo")
    roundtrip(tmp_path, bytes(700), tiny_ckpt, "fast")


def test_compresses_text_it_was_trained_on_below_8_bits(tmp_path, tiny_ckpt):
    res, _ = roundtrip(tmp_path, TEXT * 3, tiny_ckpt, "balanced")
    assert res.stats.bpb < 8.0


def test_tampered_file_is_refused_and_nothing_is_written(tmp_path, tiny_ckpt):
    src, umc, out = tmp_path / "in.bin", tmp_path / "in.umc", tmp_path / "out.bin"
    src.write_bytes(TEXT)
    compress_path(src, umc, tiny_ckpt, profile="fast", threads=1)
    blob = bytearray(umc.read_bytes())
    blob[-5] ^= 0x40
    umc.write_bytes(bytes(blob))
    with pytest.raises((FormatError, IntegrityError)):
        decompress_path(umc, out, tiny_ckpt)
    assert not out.exists()
    umc.write_bytes(bytes(blob[: len(blob) // 2]))
    with pytest.raises(FormatError):
        decompress_path(umc, out, tiny_ckpt)
    assert not out.exists()


def test_other_checkpoint_is_refused(tmp_path, tiny_ckpt):
    src, umc = tmp_path / "in.bin", tmp_path / "in.umc"
    src.write_bytes(TEXT)
    compress_path(src, umc, tiny_ckpt, profile="fast", threads=1)
    other = tiny_ckpt.with_name("step000004.pt")
    with pytest.raises(FingerprintMismatch, match="different model or numerics"):
        decompress_path(umc, tmp_path / "out.bin", other)


def test_cli_summary_and_errors(tmp_path, tiny_ckpt):
    src = tmp_path / "in.txt"
    src.write_bytes(TEXT)
    res = run_module("bin.compress", str(src), str(tmp_path / "a.umc"), "--checkpoint",
                     str(tiny_ckpt), "--config", "configs/tier1_micro.yaml", "--profile", "fast",
                     "--threads", "1", timeout=300)
    assert res.returncode == 2 and "--config does not describe the network" in res.stderr
    res = run_module("bin.compress", str(src), str(tmp_path / "a.umc"), "--checkpoint",
                     str(tiny_ckpt), "--profile", "fast", "--threads", "1", timeout=300)
    assert res.returncode == 0, res.stderr
    assert "bpb" in res.stdout and "B/s" in res.stdout
    res = run_module("bin.decompress", str(tmp_path / "a.umc"), str(tmp_path / "b.txt"),
                     timeout=300)
    assert res.returncode == 0 and "sha256 verified" in res.stdout
    assert hashlib.sha256((tmp_path / "b.txt").read_bytes()).digest() == \
        hashlib.sha256(TEXT).digest()
    res = run_module("bin.decompress", str(src), str(tmp_path / "c.txt"), timeout=300)
    assert res.returncode == 2 and "Traceback" not in res.stderr and not (tmp_path / "c.txt").exists()
    res = run_module("bin.compress", str(tmp_path / "missing"), str(tmp_path / "d.umc"),
                     "--checkpoint", str(tiny_ckpt), timeout=300)
    assert res.returncode == 2 and "cannot read input file" in res.stderr


def test_missing_checkpoint_is_explained(tmp_path, tiny_ckpt):
    (tmp_path / "x").write_bytes(TEXT)
    with pytest.raises(CodecError, match="nope.pt does not exist"):
        compress_path(tmp_path / "x", tmp_path / "y", tmp_path / "nope.pt")
    assert not (tmp_path / "y").exists()


def test_online_lora_adaptation_round_trips_when_it_triggers(tmp_path, tiny_ckpt):
    """balanced + lora.trigger_bytes small enough that both sides adapt several times."""
    from umoec import config as C
    from umoec.train import checkpoint as ckpt
    base = ckpt.checkpoint_config(ckpt.load(tiny_ckpt), "tiny")
    cfg = C.build(C.apply_overrides(C.to_dict(base), ["lora.trigger_bytes=400",
                                                        "lora.adapt_steps=2",
                                                        "lora.adapt_lr=0.01"]), "test")
    data = TEXT * 2
    src, umc, out = tmp_path / "in.bin", tmp_path / "in.umc", tmp_path / "out.bin"
    src.write_bytes(data)
    adapted = compress_path(src, umc, tiny_ckpt, config=cfg, profile="balanced", threads=1)
    decompress_path(umc, out, tiny_ckpt)
    assert out.read_bytes() == data
    plain = compress_path(src, tmp_path / "plain.umc", tiny_ckpt, profile="balanced", threads=1)
    assert adapted.stats.packed_bytes != plain.stats.packed_bytes  # the adapters did change bits


def test_match_model_travels_in_the_header_and_pays_on_repeats(tmp_path, tiny_ckpt):
    """entropy.match_min_len (default 5) is stored with the entropy settings; the decoder follows
    the header. A random 100-byte block repeated: the match model codes the repeats nearly free."""
    from umoec import config as C
    from umoec.codec import read_header
    from umoec.train import checkpoint as ckpt
    base = ckpt.checkpoint_config(ckpt.load(tiny_ckpt), "tiny")
    off = C.build(C.apply_overrides(C.to_dict(base), ["entropy.match_min_len=0"]), "test")
    data = hashlib.sha256(b"block").digest() * 3 + hashlib.sha256(b"tail").digest()[:4]
    data = data * 90                                      # 9,000 bytes, 100-byte period
    src = tmp_path / "in.bin"
    src.write_bytes(data)
    sizes = {}
    for name, cfg in (("on", None), ("off", off)):
        umc, out = tmp_path / f"{name}.umc", tmp_path / f"{name}.out"
        sizes[name] = compress_path(src, umc, tiny_ckpt, config=cfg, profile="balanced").stats.bpb
        assert read_header(umc.read_bytes()).metadata["entropy"]["match_min_len"] == \
            (5 if name == "on" else 0)
        decompress_path(umc, out, tiny_ckpt)
        assert out.read_bytes() == data
    assert sizes["on"] < 0.5 * sizes["off"], sizes
