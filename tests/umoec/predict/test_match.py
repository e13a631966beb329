"""Match model (umoec/predict/match.py): round trips, what it gains and costs, and its contracts."""
from __future__ import annotations

import itertools
from typing import ClassVar

import numpy as np
import pytest

from tests.umoec.codec.helpers import TEXT, pseudo_random_bytes
from umoec.codec import CodecSettings, compress, decompress
from umoec.codec.errors import FingerprintMismatch
from umoec.predict.match import MatchMixer, MatchModel, MatchSettings
from umoec.predict.order2 import Order2Predictor


def mixer(min_len: int = 5) -> MatchMixer:
    return MatchMixer(Order2Predictor(), MatchSettings.standard(min_len))


def roundtrip(data: bytes, predictor_factory, streams: int) -> bytes:
    blob = compress(data, predictor_factory(), CodecSettings(streams=streams, block_size=4096))
    assert decompress(blob, predictor_factory()) == data
    return blob


def bpb(blob: bytes, data: bytes) -> float:
    return 8 * len(blob) / len(data)


@pytest.mark.parametrize("data", [b"", b"x", b"ab" * 3, TEXT, pseudo_random_bytes(3000),
                                  bytes(5000), TEXT[:4097]])
@pytest.mark.parametrize("streams", [1, 7, 64])
def test_roundtrip(data, streams):
    roundtrip(data, mixer, streams)


def test_long_repeats_become_nearly_free_and_noise_costs_almost_nothing():
    r = pseudo_random_bytes(2000, b"dna")
    block = bytes(b"ACGT"[x & 3] for x in r)               # order 2 can only learn "2 bits"
    data = block * 4
    plain = bpb(roundtrip(data, Order2Predictor, 1), data)
    matched = bpb(roundtrip(data, mixer, 1), data)
    assert plain > 2                                     # measured 2.16
    assert matched < 0.4 * plain                         # measured 0.68: 3 of 4 copies ~free
    noise = pseudo_random_bytes(8000, b"noise")
    assert bpb(roundtrip(noise, mixer, 4), noise) < bpb(roundtrip(noise, Order2Predictor, 4), noise) + 0.02


def test_cross_stream_lag_is_predicted():
    """Stream 1 holds the bytes stream 0 held 50 steps earlier: once the first min_len bytes are
    seen, stream 1 is predicted from stream 0's history, and right nearly every time."""
    text = pseudo_random_bytes(1050, b"lag")
    a, b = text[50:1050], text[:1000]
    m = mixer()
    state = m.init_state(2)
    prev = np.zeros(2, np.int64)
    for t in range(1000):
        _, state = m.step(prev, state)
        prev = np.array([a[t], b[t]], np.int64)
    _, state = m.step(prev, state)
    st = state[1]
    assert st.predicted > 900 and st.right >= st.predicted - 2


def test_streams_without_a_match_keep_the_inner_logits_exactly():
    inner, m = Order2Predictor(), mixer()
    s_inner, s_mix = inner.init_state(3), m.init_state(3)
    rng = np.random.default_rng(0)
    for _ in range(40):                                   # fresh random bytes: no match forms
        prev = rng.integers(0, 256, 3)
        a, s_inner = inner.step(prev, s_inner)
        b, s_mix = m.step(prev, s_mix)
        assert (s_mix[1].length == 0).all()
        assert np.array_equal(a, b)


def test_fingerprint_names_the_settings_and_a_wrong_decoder_is_refused():
    assert mixer(5).fingerprint() != mixer(6).fingerprint() != Order2Predictor().fingerprint()
    blob = compress(TEXT, mixer(5), CodecSettings(streams=4))
    with pytest.raises(FingerprintMismatch):
        decompress(blob, mixer(6))
    with pytest.raises(FingerprintMismatch):
        decompress(blob, Order2Predictor())


def test_adapt_is_forwarded_only_when_the_inner_predictor_adapts():
    class Adaptive(Order2Predictor):
        calls: ClassVar[list] = []

        def adapt(self, recent, state):
            self.calls.append([len(r) for r in recent])
            return state

    assert not hasattr(mixer(), "adapt")
    inner = Adaptive()
    m = MatchMixer(inner)
    blob = compress(TEXT, m, CodecSettings(streams=2, adapt_every=500))
    assert inner.calls and decompress(blob, MatchMixer(Adaptive())) == TEXT


def test_verified_length_is_the_common_suffix():
    mm = MatchModel(MatchSettings(min_len=3, check=8))
    st = mm.init_state(2)
    for col in zip(b"xxabcdefg", b"qqqqbcdef", strict=True):
        mm.observe(np.frombuffer(bytes(col), np.uint8), st)
    # stream 1 ends "bcdef"; in stream 0 "bcdef" is followed by position 8 ("g")
    assert mm._verify(st, np.array([1]), np.array([(0 << 32) | 8], np.int64)).tolist() == [5]
    # stream 0 ends "g"; stream 1's position 7 follows "...bcd": nothing in common
    assert mm._verify(st, np.array([0]), np.array([(1 << 32) | 7], np.int64)).tolist() == [0]


def test_standard_settings_add_a_long_table_only_below_it():
    assert MatchSettings.standard(5).long_len == 12 and MatchSettings.standard(12).long_len == 0
    assert MatchSettings.standard(5).describe() != MatchSettings(min_len=5).describe()


def test_without_the_long_table_it_still_round_trips():
    roundtrip(TEXT * 2, lambda: MatchMixer(Order2Predictor(), MatchSettings(min_len=4)), 3)


@pytest.mark.parametrize("kwargs", [dict(min_len=1), dict(min_len=40), dict(hash_bits=9),
                                    dict(limit=2), dict(prior=0), dict(min_len=5, long_len=5),
                                    dict(long_len=40)])
def test_settings_out_of_range_are_refused(kwargs):
    with pytest.raises(ValueError, match="match"):
        MatchSettings(**kwargs)


class Sliced(Order2Predictor):
    """Order2 handing its logits over in slices, as a network split over processes does
    (predict/protocol.py's step_parts), logging when `meanwhile` runs."""
    cuts = (2, 5)

    def __init__(self):
        super().__init__()
        self.log = []

    def step_parts(self, prev, state, emit, meanwhile=None):
        if meanwhile is not None:
            meanwhile()
            self.log.append("meanwhile")
        logits, state = self.step(prev, state)
        edges = [0, *(c for c in self.cuts if c < len(logits)), len(logits)]
        for lo, hi in itertools.pairwise(edges):
            self.log.append((lo, hi))
            emit(lo, hi, logits[lo:hi])
        return state


def test_slices_of_streams_get_the_match_model_s_logits_of_the_whole_batch():
    """The match model mixes each slice as it comes, having learned the previous bytes before
    the first (`meanwhile`); its logits are those of the whole batch, with matches active, and
    the mixing stage codes the slices into the very file of whole steps, decoded either way."""
    from umoec.predict.protocol import parts
    B = 7
    data = np.frombuffer((TEXT * 3)[:B * 300], np.uint8).reshape(B, 300).astype(np.int64)
    whole, sliced = mixer(), MatchMixer(Sliced(), MatchSettings.standard(5))
    sw, ss = whole.init_state(B), sliced.init_state(B)
    matched, got = 0, []
    for t in range(300):
        prev = data[:, t - 1] if t else np.zeros(B, np.int64)
        a, sw = whole.step(prev, sw)
        got.clear()
        ss = parts(sliced, prev, ss, lambda lo, hi, x: got.append((lo, hi, x)))
        assert [g[:2] for g in got] == [(0, 2), (2, 5), (5, 7)]
        assert sliced.inner.log[-4:] == ["meanwhile", (0, 2), (2, 5), (5, 7)]
        assert np.array_equal(np.concatenate([g[2] for g in got]), a)
        matched += int((sw[1].length > 0).sum())
    assert matched > 300
    settings = CodecSettings(streams=B, coder="cm", block_size=1024)
    text = (TEXT * 3)[:5000]
    blob = compress(text, mixer(), settings)
    assert compress(text, MatchMixer(Sliced(), MatchSettings.standard(5)), settings) == blob
    assert decompress(blob, MatchMixer(Sliced(), MatchSettings.standard(5))) == text


class Foreseeing(Sliced):
    """Sliced, recording what the encoder foresees and what each step is then given."""

    def __init__(self):
        super().__init__()
        self.told, self.given, self.handed = [], [], []

    def foresee(self, next_prev, state):
        self.told.append(np.array(next_prev))

    def step_parts(self, prev, state, emit, meanwhile=None):
        self.given.append(np.array(prev))
        handed = []
        self.handed.append(handed)

        def kept(lo, hi, logits):
            coded = emit(lo, hi, logits)
            handed.append(None if coded is None else np.array(coded, dtype=np.int64))
        return super().step_parts(prev, state, kept, meanwhile)


def test_the_encoder_foresees_each_next_step_s_bytes_and_the_decoder_none():
    """Through the match model, across blocks: the encoder tells the network the bytes of the
    step after the next before every step but the last, the very bytes that step is given; the
    decoder, which cannot know them, never; the file is the one of a predictor that does not
    listen."""
    B = 7
    settings = CodecSettings(streams=B, coder="cm", block_size=1024)
    text = (TEXT * 3)[:5000]
    enc = Foreseeing()
    blob = compress(text, MatchMixer(enc, MatchSettings.standard(5)), settings)
    assert blob == compress(text, mixer(), settings)
    steps = -(-len(text) // B)
    assert len(enc.given) == steps and len(enc.told) == steps - 1
    for told, given in zip(enc.told, enc.given[1:], strict=True):
        assert np.array_equal(told, given)
    dec = Foreseeing()
    assert decompress(blob, MatchMixer(dec, MatchSettings.standard(5))) == text
    assert dec.told == [] and len(dec.given) == steps


def test_the_decoder_s_coder_hands_each_slice_s_bytes_back_and_the_encoder_s_none():
    """Through the match model, across blocks: emit returns the bytes a slice's streams were
    decoded to at that step (the next step's prev, which a split hands on to the child that
    computes those streams), ended streams' 0 included; an encoder's emit returns None."""
    B = 7
    settings = CodecSettings(streams=B, coder="cm", block_size=1024)
    text = (TEXT * 3)[:4997]                  # 714 steps, the last with 6 streams left
    enc = Foreseeing()
    blob = compress(text, MatchMixer(enc, MatchSettings.standard(5)), settings)
    assert all(h is None for step in enc.handed for h in step)
    dec = Foreseeing()
    assert decompress(blob, MatchMixer(dec, MatchSettings.standard(5))) == text
    cuts = [(0, 2), (2, 5), (5, 7)]
    for handed, after in zip(dec.handed, dec.given[1:], strict=False):
        assert [len(h) for h in handed] == [hi - lo for lo, hi in cuts]
        assert np.array_equal(np.concatenate(handed), after)
    last = dec.handed[-1]
    assert [len(h) for h in last] == [2, 3, 2] and last[2][1] == 0   # stream 6 has ended
