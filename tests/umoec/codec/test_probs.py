"""The one probability path: exact totals, floor of 1, determinism, extremes, sharpening."""
import hashlib

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from umoec.codec.errors import ProbabilityError
from umoec.codec.probs import (
    ALPHA_ONE,
    EXP_TABLE,
    freqs_to_cdf,
    logit_distances,
    logits_to_freqs,
    symbol_intervals,
)


def check_valid(freqs, n):
    assert freqs.dtype == np.int64
    assert (freqs >= 1).all()
    assert (freqs.sum(axis=1) == 1 << n).all()


@pytest.mark.parametrize("n", range(10, 33))
def test_every_precision_gives_exact_totals_and_min_one(rng, n):
    logits = (rng.standard_normal((50, 256)) * rng.uniform(0.01, 30, (50, 1))).astype(np.float32)
    check_valid(logits_to_freqs(logits, n), n)


def test_exp_table_is_pinned():
    # Built with Decimal arithmetic: the same table on every platform. Changing it changes every .umc.
    assert hashlib.sha256(EXP_TABLE.astype("<i8").tobytes()).hexdigest()[:16] == "0f6cf7eb2cd18df1"


def test_same_bits_same_output_numpy_and_torch(rng):
    logits = (rng.standard_normal((8, 256)) * 3).astype(np.float32)
    a = logits_to_freqs(logits, 16)
    b = logits_to_freqs(logits.copy(), 16)
    c = logits_to_freqs(torch.from_numpy(logits.copy()), 16)
    assert (a == b).all() and (a == c).all()
    # row results do not depend on the other rows of the batch
    assert (logits_to_freqs(logits[3:4], 16) == a[3:4]).all()


def test_float64_input_is_rounded_to_float32_first(rng):
    logits = rng.standard_normal((4, 256)) * 3
    assert (logits_to_freqs(logits, 16) == logits_to_freqs(logits.astype(np.float32), 16)).all()


def test_uniform_and_near_uniform():
    f = logits_to_freqs(np.zeros((1, 256), np.float32), 16)
    assert (f == 256).all()
    near = np.full((1, 256), 5.0, np.float32)
    near[0, 7] += 1e-4
    f = logits_to_freqs(near, 16)
    check_valid(f, 16)
    assert f.max() - f.min() <= 1


def test_one_hot_gives_all_but_the_floor_to_one_byte():
    logits = np.full((2, 256), -1e9, np.float32)
    logits[0, 42] = 0.0
    logits[1, 255] = 1e30
    f = logits_to_freqs(logits, 16)
    check_valid(f, 16)
    assert f[0, 42] == (1 << 16) - 255 and f[1, 255] == (1 << 16) - 255


def test_minus_inf_means_floor_frequency():
    logits = np.zeros((1, 256), np.float32)
    logits[0, :100] = -np.inf
    f = logits_to_freqs(logits, 12)
    check_valid(f, 12)
    assert (f[0, :100] == 1).all()


@pytest.mark.parametrize("value", [np.nan, np.inf])
def test_nan_and_plus_inf_are_refused_with_the_place(value):
    logits = np.zeros((3, 256), np.float32)
    logits[2, 9] = value
    with pytest.raises(ProbabilityError, match="stream 2, byte 9"):
        logits_to_freqs(logits, 16)


def test_all_minus_inf_row_and_bad_shapes_are_refused():
    with pytest.raises(ProbabilityError, match="only -inf"):
        logits_to_freqs(np.full((1, 256), -np.inf, np.float32), 16)
    for bad in (np.zeros(256, np.float32), np.zeros((2, 255), np.float32)):
        with pytest.raises(ProbabilityError, match="shape"):
            logits_to_freqs(bad, 16)
    with pytest.raises(ProbabilityError, match="floating"):
        logits_to_freqs(np.zeros((1, 256), np.int32), 16)
    with pytest.raises(ProbabilityError, match="prob_precision"):
        logits_to_freqs(np.zeros((1, 256), np.float32), 33)


def test_quantisation_costs_almost_nothing_at_high_precision(rng):
    logits = (rng.standard_normal((200, 256)) * 3).astype(np.float32)
    p = np.exp(logits.astype(np.float64) - logits.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    for n, limit in ((24, 1e-4), (16, 3e-3)):
        q = logits_to_freqs(logits, n) / (1 << n)
        kl = (p * np.log2(p / q)).sum(1).mean()
        assert kl < limit, (n, kl)


def test_sharpening_changes_the_distribution_both_ways(rng):
    logits = (rng.standard_normal((10, 256)) * 2).astype(np.float32)
    plain = logits_to_freqs(logits, 16)
    assert (logits_to_freqs(logits, 16, ALPHA_ONE) == plain).all()
    sharp = logits_to_freqs(logits, 16, 24)
    flat = logits_to_freqs(logits, 16, 12)
    for f in (sharp, flat):
        check_valid(f, 16)
    assert (sharp.max(1) > plain.max(1)).all() and (flat.max(1) < plain.max(1)).all()


def test_cdf_and_intervals(rng):
    f = logits_to_freqs((rng.standard_normal((5, 256)) * 2).astype(np.float32), 14)
    cdf = freqs_to_cdf(f)
    assert (cdf[:, 0] == 0).all() and (cdf[:, -1] == 1 << 14).all()
    sym = np.array([0, 255, 3, 128, 7])
    start, freq = symbol_intervals(f, sym)
    assert (start == cdf[np.arange(5), sym]).all() and (freq == f[np.arange(5), sym]).all()


def test_distances_are_capped_and_integral():
    logits = np.array([[3e38] + [-3e38] * 255], np.float32)
    d = logit_distances(logits)
    assert d[0, 0] == 0 and (d[0, 1:] == EXP_TABLE.size - 1).all()


@settings(max_examples=200, deadline=None)
@given(arrays(np.float32, (3, 256), elements=st.floats(width=32, allow_nan=True, allow_infinity=True)),
       st.integers(10, 32), st.integers(1, 255))
def test_any_float_input_is_valid_or_a_clear_error(logits, n, alpha_q):
    try:
        f = logits_to_freqs(logits, n, alpha_q)
    except ProbabilityError:
        assert np.isnan(logits).any() or np.isposinf(logits).any() or np.isneginf(logits).all(1).any()
        return
    check_valid(f, n)
