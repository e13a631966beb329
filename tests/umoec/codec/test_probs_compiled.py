"""The probability path's compiled loops (_probs.c) equal their references integer for integer:
the cumulative frequencies every coded step consumes and the match model's mixing."""
import os

import numpy as np
import pytest

from umoec.codec import probs
from umoec.codec.errors import ProbabilityError
from umoec.predict.match import N_CELLS, MatchModel, MatchSettings

C = probs._c
if C is None:
    if os.environ.get("CI") and os.environ.get("UMOEC_CM_KERNELS") != "python":
        pytest.fail("the compiled probability loops were not built (pip install needs a C compiler)",
                    pytrace=False)
    pytest.skip("compiled probability loops not built here", allow_module_level=True)


def reference(monkeypatch, fn, *args):
    monkeypatch.setattr(probs, "_c", None)
    try:
        return fn(*args)
    finally:
        monkeypatch.setattr(probs, "_c", C)


def hard_logits(rng, R: int) -> np.ndarray:
    """Rows a coder meets, and the corners: ties, -inf entries, one finite value, huge spreads,
    values whose scaled distance is exactly half-way between two integers."""
    x = (rng.normal(0, 3, (R, 256))).astype(np.float32)
    x[0] = 0.0                                           # all tied: the remainder to byte 0
    x[1, :] = -np.inf
    x[1, 17] = 2.5                                       # one possible byte
    x[2, ::3] = -np.inf
    x[3] = np.float32(1e30) * rng.normal(size=256).astype(np.float32)
    x[4] = (np.arange(256) / 512).astype(np.float32)     # distances k/2 in 1/256 nat: ties to even
    x[5, 200] = x[5, 3] = np.float32(40.0)               # two maxima: the first one wins
    x[6] = np.float32(-0.0)
    x[6, ::2] = np.float32(0.0)
    x[7] = np.round(rng.normal(0, 1, 256) * 4096).astype(np.float32) / np.float32(4096)  # engine
    return x


@pytest.mark.parametrize("precision", [10, 16, 24, 32])
def test_cum_freqs_equals_reference(monkeypatch, precision):
    rng = np.random.default_rng(precision)
    x = hard_logits(rng, 64)
    got = np.zeros((64, 257), dtype=np.int64)
    probs.cum_freqs(x, precision, got)
    want = np.zeros((64, 257), dtype=np.int64)
    reference(monkeypatch, probs.cum_freqs, x, precision, want)
    np.testing.assert_array_equal(got, want)
    assert (got[:, -1] == 1 << precision).all() and (np.diff(got, axis=1) >= 1).all()


def test_cum_freqs_refuses_what_the_reference_refuses():
    out = np.zeros((2, 257), dtype=np.int64)
    for bad in (np.nan, np.inf):
        x = np.zeros((2, 256), dtype=np.float32)
        x[1, 9] = bad
        with pytest.raises(ProbabilityError, match="stream 1, byte 9"):
            probs.cum_freqs(x, 16, out)
    x = np.full((2, 256), -np.inf, dtype=np.float32)
    with pytest.raises(ProbabilityError, match="only -inf"):
        probs.cum_freqs(x, 16, out)
    assert not out.any()                                 # nothing written before the refusal


def matched_state(rng, model: MatchModel, B: int):
    st = model.init_state(B)
    st.t = 300
    st.hist = rng.integers(0, 256, (B, 1024)).astype(np.uint8)
    st.length = rng.integers(0, 300, B) * (rng.random(B) < 0.6)
    st.src = (rng.integers(0, B, B) << 32) | rng.integers(0, 300, B)
    st.tries = rng.integers(0, 1024, N_CELLS)
    st.hits = (st.tries * rng.random(N_CELLS)).astype(np.int64)
    return st


def test_match_mix_equals_reference(monkeypatch):
    rng = np.random.default_rng(5)
    model = MatchModel(MatchSettings.standard(5))
    B = 64
    x = hard_logits(rng, B)
    st_c, st_ref = (matched_state(np.random.default_rng(7), model, B) for _ in range(2))
    got = model.mix(x, st_c)
    want = reference(monkeypatch, model.mix, x, st_ref)
    assert (st_c.length > 0).sum() > 10
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))   # bit for bit
    np.testing.assert_array_equal(st_c.pred, st_ref.pred)
    np.testing.assert_array_equal(st_c.cell, st_ref.cell)
    assert got.dtype == np.float32 and x is not got


def test_int_log_equals_reference():
    """The logarithm match_mix takes of every weight (integer bit length and shift below 2**53,
    frexp above) against numerics.int_log: around every power of two, where the mantissa's
    index and the exponent change, up to 2**62, and at random."""
    from umoec.predict.numerics import int_log, ln_mantissa_table
    from umoec.units import LN2
    rng = np.random.default_rng(11)
    edges = [(1 << k) + d for k in range(63) for d in (-2, -1, 0, 1, 2)
             if 1 <= (1 << k) + d < (1 << 63)]
    edges += [(1 << 53) + d for d in range(-40, 40)] + [(1 << 54) - 1, (1 << 62) + 12345]
    w = np.concatenate([np.array(edges, dtype=np.int64),
                        rng.integers(1, 1 << 62, 20000, dtype=np.int64),
                        rng.integers(1, 1 << 20, 20000, dtype=np.int64)])
    out = np.zeros(len(w), dtype=np.float32)
    assert C.int_log(w, out, ln_mantissa_table(), LN2, len(w))
    np.testing.assert_array_equal(out.view(np.uint32), int_log(w).view(np.uint32))
    assert not C.int_log(np.array([5, 0], np.int64), out[:2], ln_mantissa_table(), LN2, 2)


def test_match_mix_refuses_a_bad_row_like_the_reference():
    model = MatchModel(MatchSettings.standard(5))
    st = matched_state(np.random.default_rng(1), model, 4)
    st.length[:] = 5
    x = np.zeros((4, 256), dtype=np.float32)
    x[2, 3] = np.nan
    with pytest.raises(ProbabilityError, match="byte 3"):
        model.mix(x, st)


def repetitive(rng, B: int, T: int) -> np.ndarray:
    """(T, B) bytes that repeat each other and themselves, with mutations: matches are found,
    followed, broken and found again, in other streams as in their own."""
    words = [rng.integers(97, 123, rng.integers(3, 12)).astype(np.uint8) for _ in range(40)]
    text = np.concatenate([words[i] for i in rng.integers(0, 40, 4 * T)])
    cols = [text[(k * 977) % (len(text) - T):][:T].copy() for k in range(B)]
    for c in cols:
        c[rng.random(T) < 0.03] = rng.integers(0, 256)
    return np.stack(cols, axis=1)


@pytest.mark.parametrize("settings,B", [
    (MatchSettings.standard(5), 9),                          # two tables, as the coder runs it
    (MatchSettings(min_len=3, hash_bits=10, limit=16), 5),   # one table, collisions, halving
    (MatchSettings.standard(4), 1),
])
def test_match_observe_equals_reference(monkeypatch, settings, B):
    rng = np.random.default_rng(B)
    model = MatchModel(settings)
    data = repetitive(rng, B, 1300)                           # past the history's first 1,024
    states = [model.init_state(B), model.init_state(B)]
    for t, column in enumerate(data):
        x = rng.normal(0, 2, (B, 256)).astype(np.float32)
        model.mix(x, states[0])
        reference(monkeypatch, model.mix, x, states[1])
        model.observe(column, states[0])
        reference(monkeypatch, model.observe, column, states[1])
        c, r = states
        assert c.t == r.t == t + 1
        for name in ("src", "length", "pred", "cell", "hits", "tries"):
            np.testing.assert_array_equal(getattr(c, name), getattr(r, name), err_msg=f"{name} @{t}")
        assert (c.predicted, c.right) == (r.predicted, r.right)
    np.testing.assert_array_equal(c.hist, r.hist)
    for a, b in zip(c.tables, r.tables, strict=True):
        np.testing.assert_array_equal(a, b)
    assert c.right > 200 and (c.tries > 0).sum() > 5         # matches were made and scored


def test_match_observe_refuses_a_table_entry_outside_the_history():
    model = MatchModel(MatchSettings(min_len=3, hash_bits=10))
    st = model.init_state(2)
    for b in b"ab":                                          # no lookup before 3 bytes
        model.observe(np.array([b, b], np.uint8), st)
    st.tables[0][:] = (5 << 32) + 1                          # stream 5 of 2
    with pytest.raises(IndexError, match="match_observe"):
        model.observe(np.array([1, 2], np.uint8), st)
