"""compress / decompress end to end: sizes, coders, sharpening, adaptation, refusals, golden file."""
import hashlib
import itertools

import numpy as np
import pytest

from tests.umoec.codec.helpers import (
    TEXT,
    AdaptingPredictor,
    CyclePredictor,
    SourcePredictor,
    pseudo_random_bytes,
    sample_source,
    x86_like,
)
from umoec import config as C
from umoec.codec import (
    CodecError,
    CodecSettings,
    CodecStats,
    CoderUnavailable,
    DecodeMismatch,
    FingerprintMismatch,
    compress,
    decompress,
    read_header,
)
from umoec.codec.container import parse_blocks, parse_header
from umoec.engine import ENGINE_VERSION
from umoec.predict.order2 import Order2Predictor

SMALL = dict(block_size=256, model_name="cycle")


def roundtrip(data, predictor_factory, **kw):
    settings = CodecSettings(**{**SMALL, **kw})
    blob = compress(data, predictor_factory(), settings)
    assert decompress(blob, predictor_factory()) == data
    return blob


@pytest.mark.parametrize("streams", [1, 4, 17])
@pytest.mark.parametrize("coder,n", [("rans", 16), ("tans", 12)])
def test_sizes_around_streams_and_block_boundaries(streams, coder, n):
    per_block = -(-256 // streams) * streams
    sizes = {0, 1, 2, streams - 1, streams, streams + 1, per_block - 1, per_block, per_block + 1,
             2 * per_block + 1}
    for size in sorted(s for s in sizes if s >= 0):
        data = pseudo_random_bytes(size)
        roundtrip(data, CyclePredictor, streams=streams, coder=coder, prob_precision=n)


@pytest.mark.parametrize("kind", ["random", "zeros", "text", "binary"])
@pytest.mark.parametrize("coder,precision,n", [("rans", 32, 16), ("rans", 64, 32), ("rans", 32, 10),
                                               ("tans", 32, 12), ("tans", 64, 10)])
def test_data_kinds_with_the_order2_predictor(kind, coder, precision, n):
    data = {"random": pseudo_random_bytes(3000), "zeros": bytes(3000), "text": TEXT,
            "binary": np.arange(3000, dtype=np.uint32).tobytes()[:3000]}[kind]
    blob = roundtrip(data, Order2Predictor, streams=4, coder=coder, precision=precision, prob_precision=n)
    if kind in ("zeros", "text"):
        assert len(blob) < len(data) / 2


def test_order2_predictor_compresses_text_far_below_8_bits():
    blob = roundtrip(TEXT * 3, Order2Predictor, streams=2, block_size=65536)
    assert 8 * len(blob) / len(TEXT * 3) < 1.0


@pytest.mark.parametrize("coder", ["rans", "tans"])
def test_the_x86_filter_codes_the_filtered_bytes_and_decodes_the_original(coder):
    code = x86_like(5000)
    blob = roundtrip(code, Order2Predictor, streams=3, coder=coder, prob_precision=12, x86=True)
    header = read_header(blob)
    assert header.x86 and header.original_size == len(code)
    assert header.sha256 == hashlib.sha256(code).digest()       # the original's, not the coded
    plain = roundtrip(code, Order2Predictor, streams=3, coder=coder, prob_precision=12)
    assert not read_header(plain).x86 and len(blob) < len(plain)
    for data in (b"", b"\xe8", TEXT):
        roundtrip(data, Order2Predictor, coder=coder, prob_precision=12, x86=True)


def test_empty_and_one_byte_files():
    for data in (b"", b"\x00", b"\xff"):
        for streams in (1, 64):
            blob = roundtrip(data, CyclePredictor, streams=streams)
            assert read_header(blob).original_size == len(data)


def test_settings_have_measured_effects():
    data = TEXT * 2
    size = {}
    for name, kw in {"base": {}, "p10": {"prob_precision": 10}, "w64": {"precision": 64},
                     "big_blocks": {"block_size": 65536}}.items():
        size[name] = len(roundtrip(data, Order2Predictor, streams=4, **kw))
    assert size["p10"] > size["base"]                 # coarser frequencies cost bits
    assert size["w64"] > size["base"]                 # wider flush per stream per block
    assert size["big_blocks"] < size["base"]          # fewer flushes and record headers


@pytest.mark.parametrize("scale,expected", [(0.5, 24), (1.6, 12), (1.0, 16)])
def test_sharpening_picks_alpha_by_measured_cost(scale, expected):
    data = sample_source(4000, seed=1)
    blob = roundtrip(data, lambda: SourcePredictor(scale), streams=2, sharpening=True, block_size=4096)
    header, offset = parse_header(blob)
    alphas = {b.alpha_q for b in parse_blocks(blob, offset, header)}
    assert alphas == {expected}
    plain = compress(data, SourcePredictor(scale), CodecSettings(streams=2, block_size=4096,
                                                                 model_name="cycle"))
    assert len(blob) <= len(plain) if expected == 16 else len(blob) < 0.98 * len(plain)


def test_adaptation_runs_at_identical_points_with_identical_bytes():
    data = pseudo_random_bytes(1000)
    enc, dec = AdaptingPredictor(), AdaptingPredictor()
    settings = CodecSettings(streams=3, adapt_every=100, **SMALL)
    blob = compress(data, enc, settings)
    assert decompress(blob, dec) == data
    assert enc.calls == dec.calls and len(enc.calls) == 9
    streams = [b"".join(call[i] for call in enc.calls) for i in range(3)]
    assert streams[0] == data[:len(streams[0])]              # stream 0 is the first segment
    assert sum(len(s) for s in streams) >= 900
    assert blob != compress(data, CyclePredictor(), CodecSettings(streams=3, **SMALL))


def test_a_mixing_stage_version_this_build_lacks_is_named(monkeypatch):
    """A cm file from a newer build (a stage version this one does not have) is refused with a
    message that says so, not only that the model differs."""
    from umoec.codec import cm
    blob = compress(TEXT, CyclePredictor(), CodecSettings(streams=2, coder="cm", **SMALL))
    assert decompress(blob, CyclePredictor()) == TEXT
    monkeypatch.setattr(cm, "VERSIONS", tuple(v for v in cm.VERSIONS if v != cm.VERSION))
    with pytest.raises(FingerprintMismatch, match=r"or by a newer build of u-moec-tiny \(this one "
                       rf"reads mixing stage versions 1-{cm.VERSIONS[-1]}\)"):
        decompress(blob, CyclePredictor())


def test_wrong_predictor_or_newer_engine_are_refused():
    blob = compress(TEXT, CyclePredictor(), CodecSettings(streams=2, **SMALL))
    with pytest.raises(FingerprintMismatch, match=r"model cycle .* decode it with the model it names"):
        decompress(blob, CyclePredictor(salt=1))
    newer = compress(TEXT, CyclePredictor(), CodecSettings(streams=2, engine=ENGINE_VERSION + 1,
                                                           **SMALL))
    with pytest.raises(FingerprintMismatch, match=f"engine v{ENGINE_VERSION + 1}.*upgrade"):
        decompress(newer, CyclePredictor())
    assert decompress(blob, CyclePredictor()) == TEXT


class Impostor(CyclePredictor):
    """Claims CyclePredictor's fingerprint but predicts differently: decoding cannot succeed."""

    def fingerprint(self):
        return CyclePredictor().fingerprint()


@pytest.mark.parametrize("coder,n", [("rans", 16), ("tans", 12)])
def test_a_lying_predictor_never_yields_wrong_bytes(coder, n):
    blob = compress(TEXT, CyclePredictor(), CodecSettings(streams=3, coder=coder, prob_precision=n, **SMALL))
    with pytest.raises(DecodeMismatch, match="not damaged; this is a bug") as info:
        decompress(blob, Impostor(salt=7))
    assert info.value.exit_code == 1


def test_tans_above_12_bits_is_refused_before_any_work():
    with pytest.raises(CoderUnavailable, match=r"use entropy.coder=rans") as info:
        compress(TEXT, CyclePredictor(), CodecSettings(coder="tans", prob_precision=16))
    assert info.value.exit_code == 2 and "\n" not in str(info.value)
    with pytest.raises(CodecError, match="streams"):
        compress(TEXT, CyclePredictor(), CodecSettings(streams=0))


def test_progress_reports_monotone_bytes_up_to_the_total():
    seen = []
    data = pseudo_random_bytes(5000)
    blob = compress(data, CyclePredictor(), CodecSettings(streams=2, **SMALL),
                    progress=lambda done, total: seen.append((done, total)))
    assert seen[-1] == (5000, 5000) and all(a[0] <= b[0] for a, b in itertools.pairwise(seen))
    seen.clear()
    decompress(blob, CyclePredictor(), progress=lambda done, total: seen.append((done, total)))
    assert seen[-1] == (5000, 5000) and len(seen) >= 10


def test_progress_callback_can_cancel():
    def cancel(done, total):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        compress(pseudo_random_bytes(2000), CyclePredictor(), CodecSettings(**SMALL), progress=cancel)


def test_settings_from_config_and_the_model_in_the_header():
    cfg = C.load_preset("tier1_micro")
    s = CodecSettings.from_config(cfg, streams=8, profile="fast", adapt_every=4096,
                                  model_hash=bytes(range(32)), model_name="m-1",
                                  metadata={"ckpt": "x.pt"})
    assert (s.coder, s.precision, s.prob_precision, s.block_size) == (
        cfg.entropy.coder, cfg.entropy.precision, cfg.entropy.prob_precision, cfg.entropy.block_size)
    blob = compress(TEXT, CyclePredictor(), s)
    h = read_header(blob)
    assert (h.profile, h.engine, h.streams, h.metadata, h.model_hash, h.model_name,
            h.adapt_every) == ("fast", ENGINE_VERSION, 8, {"ckpt": "x.pt"}, bytes(range(32)),
                               "m-1", 4096)


def test_golden_umc_file():
    settings = CodecSettings(streams=4, block_size=1024, model_name="order2", profile="golden",
                             metadata={"what": "golden"})
    blob = compress(TEXT, Order2Predictor(), settings)
    assert decompress(blob, Order2Predictor()) == TEXT
    assert (len(blob), hashlib.sha256(blob).hexdigest()[:16]) == PIN_GOLDEN


PIN_GOLDEN = (498, "db09ec587ea7c865")   # changes only with a deliberate format change (format 3: 567 -> 498)


class NaNPredictor(CyclePredictor):
    def step(self, prev, state):
        logits, state = super().step(prev, state)
        if state["t"][0] == 3:
            logits[0, 5] = np.nan
        return logits, state


def test_a_predictor_producing_nan_stops_compression_with_a_runtime_error():
    from umoec.codec import ProbabilityError
    with pytest.raises(ProbabilityError, match="stream 0, byte 5") as info:
        compress(TEXT, NaNPredictor(), CodecSettings(**SMALL))
    assert info.value.exit_code == 1


def test_stats_summary_line():
    blob = compress(TEXT, Order2Predictor(), CodecSettings(streams=2))
    stats = CodecStats(len(TEXT), len(blob), 0.5)
    assert 0 < stats.bpb < 8 and stats.ratio > 1 and stats.bpb == 8 * len(blob) / len(TEXT)
    assert stats.summary() == (f"raw {len(TEXT):,} B, compressed {len(blob):,} B, {stats.bpb:.3f} bpb, "
                               f"ratio {stats.ratio:.2f}, 0.50 s, {2 * len(TEXT):,} B/s")
    assert CodecStats(0, 0, 0.0).summary() == ("raw 0 B, compressed 0 B, 0.000 bpb, ratio 0.00, "
                                               "0.00 s, 0 B/s")
