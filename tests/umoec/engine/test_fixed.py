"""Fixed-point primitives: rounding rules, tables pinned to their decimal values, exact products."""
import hashlib
from decimal import Decimal, localcontext

import numpy as np
import pytest

from umoec.engine import fixed as fx


def test_rshift_rounds_halves_up_for_both_signs():
    x = np.array([5, 6, 7, -5, -6, -7, 0, -1, 1], dtype=np.int64)
    assert fx.rshift(x, 2).tolist() == [1, 2, 2, -1, -1, -2, 0, 0, 0]   # 1.25, 1.5, 1.75 ...


def test_to_int_is_rint_and_saturates():
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, 1e30, -1e30, 2.0 ** 62 + 5e5])
    assert fx.to_int(x).tolist() == [0, 2, 2, 0, -2, 1 << 62, -(1 << 62), 1 << 62]


def _digest(a: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(a, dtype="<i8").tobytes()).hexdigest()[:16]


def test_tables_are_the_decimal_values_pinned():
    """The tables are part of the engine's definition: any change breaks every .umc file."""
    sig, sp = fx.sigmoid_table(), fx.softplus_table()
    t1, t2, t3 = fx.exp_neg_tables()
    assert sig[len(sig) // 2] == 1 << 23 and sig[0] == 2 and sig[-1] == (1 << 24) - 2
    with localcontext() as ctx:
        ctx.prec = 40
        assert sp[len(sp) // 2] == int((Decimal(2).ln() * (1 << 24)).to_integral_value())
    assert t1[0] == t2[0] == t3[0] == 1 << 30
    assert {k: _digest(v) for k, v in {"sig": sig, "sp": sp, "t1": t1, "t2": t2, "t3": t3}.items()} \
        == PINNED_TABLES


PINNED_TABLES = {"sig": "ac7d6393b073d363", "sp": "3f6d2f229eb15982", "t1": "87fadd6a7e8870f8",
                 "t2": "3a4d98f302fc74b6", "t3": "982000c52ee933ac"}


def test_nonlinearities_track_their_real_functions():
    x = np.arange(-20 << 12, 20 << 12, 37, dtype=np.int64)
    real = x / 4096.0
    # linear interpolation at 1/64 steps: |error| <= h**2/8 max|f''| ~ 3e-6 (below a Q15 gate's step)
    assert np.abs(fx.sigmoid(x) / 2.0 ** 24 - 1 / (1 + np.exp(-real))).max() < 4e-6
    assert np.abs(fx.silu(x) / 4096.0 - real / (1 + np.exp(-real))).max() < 4e-4
    sp = np.logaddexp(0, real)
    assert np.abs(fx.softplus(x) / 2.0 ** 24 - sp).max() < 1e-5          # h**2/8 * 1/4
    d = np.arange(0, 20 << 20, 4099, dtype=np.int64)
    assert np.abs(fx.exp_neg(d) / 2.0 ** 24 - np.exp(-d / 2.0 ** 20)).max() < 2e-7


def test_quant_rows_stay_int8_and_reconstruct():
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.integers(-(1 << 20), 1 << 20, (50, 96)),
                        np.zeros((1, 96), np.int64), np.full((1, 96), (1 << 40))])
    x8, amax = fx.quant_rows(x)
    assert x8.dtype == np.float32 and np.abs(x8).max() <= 127 and (x8 == np.rint(x8)).all()
    assert amax[-2, 0] == 1 and amax[-1, 0] == (1 << 24) - 1          # zero row; clamped row
    err = np.abs(x8[:50] * amax[:50] / 127.0 - x[:50]) / amax[:50]
    assert err.max() <= 0.5 / 127 + 1e-12


@pytest.mark.parametrize("K", [96, 1024, 3000])
def test_int8_products_are_exact_even_at_the_worst_case(K):
    rng = np.random.default_rng(K)
    x8 = rng.choice([-127, 127], (8, K)).astype(np.float32)
    w8 = rng.choice([-127, 127], (K, 5)).astype(np.float32)
    x8[0], w8[:, 0] = 127, 127                                           # the largest sum
    exact = x8.astype(np.int64) @ w8.astype(np.int64)
    assert (fx.matmul8(x8, w8).astype(np.int64) == exact).all()
    assert exact[0, 0] == K * 127 * 127


def test_norms_are_scale_free_and_zero_safe():
    x = np.array([[4096, -4096, 8192, 0], [0, 0, 0, 0]], dtype=np.int64)
    y = fx.rms_norm(x, None, 1e-5)
    assert (y[1] == 0).all()
    assert (fx.rms_norm(x * 3, None, 1e-5)[0] == y[0]).all() or \
        np.abs(fx.rms_norm(x * 3, None, 1e-5)[0] - y[0]).max() <= 1
    ln = fx.layer_norm(x + 1000, 1e-6)
    assert abs(int(ln[0].sum())) <= 4


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.float64, np.float32])
def test_iclip_is_np_clip(dtype):
    """The engine's clamp calls the clip ufunc directly for 8-byte arrays; everything else (and
    a bound outside a narrower dtype) goes through np.clip: the same values and dtype either way."""
    x = (np.random.default_rng(3).standard_normal((40, 9)) * 2.0 ** 28).astype(dtype)
    for lo, hi in ((-(2 ** 24 - 1), 2 ** 24 - 1), (0, 5), (-(2 ** 31 - 1), 2 ** 31 - 1),
                   (-(2 ** 40), 2 ** 40)):
        got, want = fx.iclip(x, lo, hi), np.clip(x, lo, hi)
        assert got.dtype == want.dtype and np.array_equal(got, want), (lo, hi)
    assert fx.clamp(np.int64(1 << 30), 24) == (1 << 24) - 1
