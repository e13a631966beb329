"""File helpers: atomic output, nothing left behind on failure, stats for the CLI summary line."""
import pytest

from tests.umoec.codec.helpers import TEXT, CyclePredictor
from umoec.codec import (CodecError, CodecSettings, FingerprintMismatch, FormatError, Order2Predictor,
                         compress_file, decompress_file)


def test_file_roundtrip_and_stats(tmp_path):
    src, packed, back = tmp_path / "in.txt", tmp_path / "out" / "x.umc", tmp_path / "back.txt"
    src.write_bytes(TEXT)
    stats = compress_file(src, packed, Order2Predictor(), CodecSettings(streams=2))
    assert packed.stat().st_size == stats.packed_bytes and stats.raw_bytes == len(TEXT)
    assert 0 < stats.bpb < 8 and stats.ratio > 1 and "bpb" in stats.summary()
    dstats = decompress_file(packed, back, Order2Predictor())
    assert back.read_bytes() == TEXT and dstats.raw_bytes == len(TEXT)


def test_failed_decompression_leaves_nothing_and_keeps_old_output(tmp_path):
    src, packed = tmp_path / "in", tmp_path / "in.umc"
    src.write_bytes(TEXT)
    compress_file(src, packed, CyclePredictor(), CodecSettings(streams=2))
    target = tmp_path / "restored"
    with pytest.raises(FingerprintMismatch):
        decompress_file(packed, target, CyclePredictor(salt=3))
    assert not target.exists()
    target.write_bytes(b"old contents")
    packed.write_bytes(packed.read_bytes()[:-3])
    with pytest.raises(FormatError, match="truncated"):
        decompress_file(packed, target, CyclePredictor())
    assert target.read_bytes() == b"old contents"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in", "in.umc", "restored"]   # no temp files


def test_interrupted_compression_leaves_nothing(tmp_path):
    src = tmp_path / "in"
    src.write_bytes(TEXT)

    def stop(done, total):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        compress_file(src, tmp_path / "x.umc", CyclePredictor(), CodecSettings(block_size=256), progress=stop)
    assert [p.name for p in tmp_path.iterdir()] == ["in"]


def test_missing_input_is_a_clear_error(tmp_path):
    with pytest.raises(CodecError, match="cannot read input file"):
        compress_file(tmp_path / "nope", tmp_path / "x.umc", CyclePredictor())
    with pytest.raises(CodecError, match="cannot read .umc file"):
        decompress_file(tmp_path / "nope.umc", tmp_path / "x", CyclePredictor())


def test_cli_plumbing_prints_codec_errors_as_one_line(tmp_path, capsys):
    from umoec.cli import run_main

    def main(argv):
        decompress_file(tmp_path / "missing.umc", tmp_path / "out", CyclePredictor())

    assert run_main(main, "decompress", []) == 2
    err = capsys.readouterr().err
    assert err.startswith("decompress: cannot read .umc file") and err.count("\n") == 1
