"""rANS: round trips, numpy == scalar reference, exact consumption, pinned golden bitstream."""
import hashlib

import numpy as np
import pytest

from tests.umoec.codec.helpers import coder_inputs, formula_logits, random_block
from umoec.codec import rans
from umoec.codec.errors import CoderUnavailable, FormatError
from umoec.codec.probs import logits_to_freqs

CONFIGS = [(32, 10), (32, 16), (64, 16), (64, 24), (64, 32)]


def roundtrip(freqs, symbols, counts, precision, n):
    starts, f = coder_inputs(freqs, symbols)
    payload = rans.encode(starts, f, counts, precision, n)
    assert payload == rans.encode_ref(starts, f, counts, precision, n)
    dec = rans.Decoder(payload, int(counts[0]), precision, n)
    for t, k in enumerate(counts):
        assert (dec.decode(freqs[t, :k]) == symbols[t, :k]).all()
    dec.finish()
    return payload


@pytest.mark.parametrize("precision,n", CONFIGS)
@pytest.mark.parametrize("lanes", [1, 3, 64])
def test_random_distributions_roundtrip(rng, precision, n, lanes):
    freqs, symbols = random_block(rng, 60, lanes, n)
    counts = np.full(60, lanes)
    counts[-1] = (lanes + 1) // 2                  # a shorter last step, as at the end of a file
    payload = roundtrip(freqs, symbols, counts, precision, n)
    ideal = sum(-np.log2(freqs[t, i, symbols[t, i]] / (1 << n)) for t in range(60)
                for i in range(counts[t])) / 8
    assert len(payload) <= ideal + lanes * precision / 8 + 2 * lanes   # within the flush cost


@pytest.mark.parametrize("precision,n", CONFIGS)
def test_skewed_uniform_and_improbable_symbols(rng, precision, n):
    T, B = 40, 4
    uniform = np.full((T, B, 256), 1 << (n - 8), np.int64)
    roundtrip(uniform, rng.integers(0, 256, (T, B)), np.full(T, B), precision, n)
    onehot = np.ones((T, B, 256), np.int64)
    onehot[..., 65] = (1 << n) - 255
    payload = roundtrip(onehot, np.full((T, B), 65), np.full(T, B), precision, n)
    ideal = T * B * -np.log2(((1 << n) - 255) / (1 << n)) / 8
    assert len(payload) <= B * precision // 8 + ideal + B * precision // 16   # ~ the flush alone
    worst = roundtrip(onehot, np.full((T, B), 66), np.full(T, B), precision, n)  # frequency-1 symbols
    assert len(worst) > T * B * (n - 1) / 8


def test_single_symbol_and_more_streams_than_symbols(rng):
    freqs, symbols = random_block(rng, 1, 1, 16)
    roundtrip(freqs, symbols, np.array([1]), 32, 16)
    freqs, symbols = random_block(rng, 2, 300, 16)
    roundtrip(freqs, symbols, np.array([300, 5]), 32, 16)


def test_reference_decoder_agrees(rng):
    freqs, symbols = random_block(rng, 20, 3, 16)
    counts = np.array([3] * 19 + [1])
    starts, f = coder_inputs(freqs, symbols)
    out = rans.decode_ref(rans.encode(starts, f, counts, 32, 16), freqs, counts, 32, 16)
    assert out == [list(symbols[t, :k]) for t, k in enumerate(counts)]


def test_decoder_consumes_exactly_what_was_written(rng):
    freqs, symbols = random_block(rng, 30, 2, 16)
    counts = np.full(30, 2)
    starts, f = coder_inputs(freqs, symbols)
    payload = rans.encode(starts, f, counts, 32, 16)

    def decode(data):
        dec = rans.Decoder(data, 2, 32, 16)
        for t in range(30):
            dec.decode(freqs[t])
        dec.finish()

    decode(payload)
    for bad in (payload + b"\0\0", payload[:-2], payload[:-1]):
        with pytest.raises(FormatError):
            decode(bad)


def test_precision_limits_are_refused_with_the_reason():
    with pytest.raises(CoderUnavailable, match="precision/2"):
        rans.check_params(32, 17)
    with pytest.raises(CoderUnavailable, match="32 or 64"):
        rans.check_params(48, 16)


def golden_input(lanes=3, steps=25, n=16):
    freqs = np.stack([logits_to_freqs(formula_logits(t, lanes), n) for t in range(steps)])
    symbols = np.array([[(t * 31 + i * 17) % 256 for i in range(lanes)] for t in range(steps)])
    counts = np.array([lanes] * (steps - 1) + [lanes - 1])
    return freqs, symbols, counts


@pytest.mark.parametrize("precision,n,digest", [(32, 16, "99520acb08284d35"), (64, 32, "9de23222a8d6eab3")])
def test_golden_bitstream(precision, n, digest):
    freqs, symbols, counts = golden_input(n=n)
    payload = roundtrip(freqs, symbols, counts, precision, n)
    assert hashlib.sha256(payload).hexdigest()[:16] == digest
