"""tANS: round trips, agreement with explicitly built FSE tables, refusal above 12 bits, golden."""
import hashlib

import numpy as np
import pytest

from tests.umoec.codec.helpers import coder_inputs, formula_logits, random_block
from umoec.codec import tans
from umoec.codec.errors import CoderUnavailable, FormatError
from umoec.codec.probs import logits_to_freqs


def roundtrip(freqs, symbols, counts, n, check_ref=False):
    starts, f = coder_inputs(freqs, symbols)
    payload = tans.encode(starts, f, counts, n)
    if check_ref:
        assert payload == tans.encode_ref(freqs, symbols, counts, n)
    dec = tans.Decoder(payload, int(counts[0]), n)
    for t, k in enumerate(counts):
        assert (dec.decode(freqs[t, :k]) == symbols[t, :k]).all()
    dec.finish()
    return payload


@pytest.mark.parametrize("n", [10, 11, 12])
def test_matches_explicit_tables_and_roundtrips(rng, n):
    freqs, symbols = random_block(rng, 12, 2, n)
    roundtrip(freqs, symbols, np.array([2] * 11 + [1]), n, check_ref=True)


@pytest.mark.parametrize("lanes", [1, 7, 200])
def test_random_distributions_roundtrip(rng, lanes):
    freqs, symbols = random_block(rng, 40, lanes, 12)
    counts = np.full(40, lanes)
    counts[-1] = max(1, lanes // 3)
    payload = roundtrip(freqs, symbols, counts, 12)
    ideal = sum(-np.log2(freqs[t, i, symbols[t, i]] / 4096) for t in range(40)
                for i in range(counts[t])) / 8
    assert len(payload) <= 1.02 * ideal + lanes * 12 / 8 + 1


def test_skewed_uniform_and_single_symbol(rng):
    uniform = np.full((30, 3, 256), 16, np.int64)
    roundtrip(uniform, rng.integers(0, 256, (30, 3)), np.full(30, 3), 12, check_ref=True)
    onehot = np.ones((30, 3, 256), np.int64)
    onehot[..., 200] = 4096 - 255
    roundtrip(onehot, np.full((30, 3), 200), np.full(30, 3), 12, check_ref=True)
    roundtrip(onehot, np.full((30, 3), 3), np.full(30, 3), 12, check_ref=True)
    freqs, symbols = random_block(rng, 1, 1, 10)
    roundtrip(freqs, symbols, np.array([1]), 10, check_ref=True)


def test_decoder_consumes_exactly_what_was_written(rng):
    freqs, symbols = random_block(rng, 30, 2, 12)
    counts = np.full(30, 2)
    payload = roundtrip(freqs, symbols, counts, 12)

    def decode(data):
        dec = tans.Decoder(data, 2, 12)
        for t in range(30):
            dec.decode(freqs[t])
        dec.finish()

    for bad in (payload + b"\0", payload[:-1]):
        with pytest.raises(FormatError):
            decode(bad)


@pytest.mark.parametrize("n", [9, 13, 16, 24])
def test_large_tables_are_refused_with_the_reason(n):
    with pytest.raises(CoderUnavailable, match=r"entropy.coder=rans"):
        tans.check_params(n)


def test_golden_bitstream():
    lanes, steps = 3, 25
    freqs = np.stack([logits_to_freqs(formula_logits(t, lanes), 12) for t in range(steps)])
    symbols = np.array([[(t * 31 + i * 17) % 256 for i in range(lanes)] for t in range(steps)])
    payload = roundtrip(freqs, symbols, np.array([lanes] * steps), 12, check_ref=True)
    assert hashlib.sha256(payload).hexdigest()[:16] == "bb3dca3c5e2119ad"


def test_vectorised_and_scalar_encoders_write_the_same_bits(rng):
    lanes = tans.SCALAR_BELOW + 4
    freqs, symbols = random_block(rng, 30, lanes, 11)
    counts = np.array([lanes] * 29 + [5])
    starts, f = coder_inputs(freqs, symbols)
    assert tans.encode(starts, f, counts, 11) == tans._encode_scalar(starts, f, counts, 11)
