"""The compiled loops (_kernels.c) equal their numpy references integer for integer."""
import os

import numpy as np
import pytest

from umoec.engine import fixed as fx
from umoec.engine import kernels as K
from umoec.engine.model import ExactModel

C = K._c
if C is None:
    if os.environ.get("CI") and os.environ.get("UMOEC_ENGINE_KERNELS") != "numpy":
        pytest.fail("the compiled engine kernels were not built (pip install needs a C compiler)",
                    pytrace=False)
    pytest.skip("compiled kernels not built here", allow_module_level=True)


@pytest.fixture
def numpy_only(monkeypatch):
    """Run the references: kernels' dispatch falls back to numpy while _c is None."""
    def ref(fn, *args, **kw):
        monkeypatch.setattr(K, "_c", None)
        try:
            return fn(*args, **kw)
        finally:
            monkeypatch.setattr(K, "_c", C)
    return ref


@pytest.fixture(params=["avx512", "avx2", "plain"])
def simd(request):
    """The AVX-512 and AVX2 twins of SiLU and the state update (_kernels.c), then the plain
    loops; the CPU's choice is restored after."""
    was = C.simd()
    if C.simd(request.param) != request.param:
        C.simd(was)
        pytest.skip(f"no {request.param} on this CPU")
    yield request.param
    C.simd(was)


def extreme_rows(rng, R, Cn, scale):
    x = rng.integers(-scale, scale, (R, Cn))
    x[0] = 0
    x[1] = (1 << 26)                       # beyond the residual clamp
    x[2, ::2] = -(1 << 30)
    x[3] = rng.integers(-3, 4, Cn)
    return x.astype(np.int64)


@pytest.mark.parametrize("scale", [3, 4096, 1 << 22])
def test_quant_rows(numpy_only, scale):
    x = extreme_rows(np.random.default_rng(scale), 40, 96, scale)
    a8, aa = K.quant_rows(x)
    b8, ba = numpy_only(K.quant_rows, x)
    assert (a8 == b8).all() and (aa == ba).all()


@pytest.mark.parametrize("act", [False, True])
@pytest.mark.parametrize("bias", [False, True])
def test_requant(numpy_only, simd, act, bias):
    rng = np.random.default_rng(int(act) * 2 + int(bias))
    acc = rng.integers(-(1 << 23), 1 << 23, (33, 70)).astype(np.float32)
    acc[0, :5] = [0, 0.0, 1 << 23, -(1 << 23), 16129]
    amax = rng.integers(1, 1 << 24, (33, 1)).astype(np.int64)
    m = rng.uniform(1e-7, 2e-3, 70)
    m[3] = 300.0                                                   # saturating products
    b = rng.integers(-(1 << 20), 1 << 20, 70).astype(np.int64) if bias else None
    assert (K.requant(acc, amax, m, b, act) == numpy_only(K.requant, acc, amax, m, b, act)).all()


def test_silu_on_every_value_its_table_spans(numpy_only, simd):
    """SiLU (requant's activation, identity scales) on every ACT value from -17 to 17, where
    the table interpolates, and beyond the residual clamp: a rounding slip in one place shows."""
    x = np.arange(-(17 << 12), 17 << 12)
    x = np.concatenate([x, [(1 << 24) - 1, 1 << 24, -(1 << 24), 1 << 26, -(1 << 26), 3]])
    x = np.concatenate([x, np.zeros(-len(x) % 64, x.dtype)]).astype(np.float32).reshape(-1, 64)
    ones, m = np.ones((len(x), 1), np.int64), np.ones(64)
    got = K.requant(x, ones, m, None, True)
    assert (got == numpy_only(K.requant, x, ones, m, None, True)).all()


@pytest.mark.parametrize("kind", ["rms", "rms_weight", "rms_wide_weight", "adaln"])
def test_norm_quant(numpy_only, kind):
    rng = np.random.default_rng(len(kind))
    x = extreme_rows(rng, 40, 96, 1 << 18)
    w = rng.integers(-8000, 8000, 96).astype(np.int64)
    wide = w.copy()
    wide[[5, 9]] = [1 << 29, -(1 << 35)]     # beyond the vectorised loop's 2**28: the plain one
    mod = (rng.integers(-(1 << 20), 1 << 20, 96).astype(np.int64),
           rng.integers(-(1 << 14), 1 << 14, 96).astype(np.int64))
    kw = {"rms": {}, "rms_weight": {"weight": w}, "rms_wide_weight": {"weight": wide},
          "adaln": {"mod": mod}}[kind]
    a8, aa = K.norm_quant(x, **kw)
    b8, ba = numpy_only(K.norm_quant, x, **kw)
    assert (a8 == b8).all() and (aa == ba).all()


@pytest.mark.filterwarnings("ignore:invalid value encountered in cast")   # a NaN scale
@pytest.mark.parametrize("conv", ["model", "wide_taps", "wide_window", "huge_scale"])
def test_mixer_core_and_its_state(numpy_only, simd, tiny_model, conv):
    """Random in_proj products (some extreme) through every block of a real model, twice in a
    row (the state carries), on a subset of the streams. The conv sums in doubles for int16
    taps (exact for any int32 window value) and results within 2**51; a wider tap or a result
    beyond that (or NaN) takes the int64 loop: each gives the reference's integers."""
    em = ExactModel(tiny_model.tensors, tiny_model.build_config())
    rng = np.random.default_rng(5)
    for blk in em.blocks:
        d = blk.d
        st_c, st_n = em.init_state(12), em.init_state(12)
        if conv == "wide_taps":
            blk.conv_taps = blk.conv_taps.copy()
            blk.conv_taps[-1, [1, 4]] = [1 << 16, -(1 << 35)]
        elif conv == "wide_window":
            for st in (st_c, st_n):
                st.conv[blk.index][3, 0, :5] = [1 << 21, -(1 << 31), 7, (1 << 31) - 1, -(1 << 20)]
        elif conv == "huge_scale":
            blk.conv_s = blk.conv_s.copy()
            blk.conv_s[[2, 6, 9]] = [2.0 ** 45, -(2.0 ** 60), np.nan]
        rows = np.array([0, 3, 4, 7, 11])
        for _ in range(3):
            acc = rng.integers(-(1 << 22), 1 << 22, (len(rows), d.in_proj_out)).astype(np.float32)
            acc[0] = 1 << 23
            amax = rng.integers(1, 1 << 22, (len(rows), 1)).astype(np.int64)
            i = blk.index
            yc = K.mixer_core(acc, amax, blk, st_c.conv[i], st_c.ssm[i], rows)
            yn = numpy_only(K.mixer_core, acc, amax, blk, st_n.conv[i], st_n.ssm[i], rows)
            assert (yc == yn).all()
            assert (st_c.conv[i] == st_n.conv[i]).all() and (st_c.ssm[i] == st_n.ssm[i]).all()
        assert (st_c.ssm[blk.index][[1, 2]] == 0).all()       # streams not stepped keep theirs


def test_whole_steps_agree(numpy_only, tiny_model):
    em = ExactModel(tiny_model.tensors, tiny_model.build_config())
    data = np.frombuffer(b"def f(x):\n    return x + 1\n" * 8, np.uint8).reshape(4, -1)
    g = np.linspace(-1, 1, em.d.d_globals).astype(np.float32)
    sc, sn = em.init_state(4, g), em.init_state(4, g)
    for t in range(data.shape[1]):
        lc, sc = em.step(data[:, t], sc)
        ln, sn = numpy_only(em.step, data[:, t], sn)
        assert (lc == ln).all()


def test_fixed_to_int_matches_the_compiled_rounding():
    x = np.array([[0.5, 1.5, 2.5, -2.5, 3e38, -3e38, 2 ** 40 + 1.0, -(2 ** 30) - 0.5]])
    acc = x.astype(np.float32)  # requant's compiled path rounds acc * amax * m like to_int
    amax = np.ones((1, 1), np.int64)
    m = np.ones(x.shape[1])
    out = np.empty_like(acc, dtype=np.int64)
    C.requant(acc, amax, m, None, out, 1, x.shape[1], 0, None, 1)
    ref = fx.clamp(fx.to_int(acc.astype(np.float64)), fx.RESID_BITS)
    assert (out == ref).all()


def test_batched_requant_uses_each_groups_scales(numpy_only):
    rng = np.random.default_rng(9)
    acc = rng.integers(-(1 << 20), 1 << 20, (3, 5, 7)).astype(np.float32)
    amax = rng.integers(1, 1 << 20, (3, 5, 1)).astype(np.int64)
    m = rng.uniform(1e-6, 1e-3, (3, 7))
    got = K.requant(acc, amax, m, None, True)
    assert (got == numpy_only(K.requant, acc, amax, m, None, True)).all()
    assert (got[1] == K.requant(acc[1], amax[1], m[1], None, True)).all()


def test_moe_routing_packing_and_combining(numpy_only):
    rng = np.random.default_rng(11)
    R, X, k, C = 50, 8, 2, 16
    s = rng.integers(0, 1 << 24, (R, X)).astype(np.int64)
    bias = rng.integers(-(1 << 20), 1 << 20, X).astype(np.int64)
    s[0] = (1 << 22) - bias                                      # all keys tied: lower index first
    s[1] = 0                                                     # all-zero scores
    got, ref = K.moe_route(s, bias, k), numpy_only(K.moe_route, s, bias, k)
    assert all((a == b).all() for a, b in zip(got, ref, strict=True))
    chosen, gate, rank, counts = got
    assert chosen[0].tolist() == [0, 1]
    x8 = rng.integers(-127, 128, (R, C)).astype(np.float32)
    amax = rng.integers(1, 1 << 20, (R, 1)).astype(np.int64)
    cap = int(counts.max())
    packed = K.moe_pack(x8, amax, chosen, rank, X, cap)
    assert all((a == b).all() for a, b in zip(packed, numpy_only(K.moe_pack, x8, amax, chosen,
                                                                   rank, X, cap), strict=True))
    ye = rng.integers(-(1 << 24), 1 << 24, (X, cap, C)).astype(np.int64)
    assert (K.moe_combine(ye, chosen, rank, gate) ==
            numpy_only(K.moe_combine, ye, chosen, rank, gate)).all()


@pytest.mark.parametrize("second", [False, True])
def test_top_margin(numpy_only, second):
    rng = np.random.default_rng(int(second))
    logits = rng.integers(-(20 << 12), 20 << 12, (64, 256)).astype(np.int64)
    logits[0] = 0                                                # uniform
    logits[1, 3] = 60 << 12                                      # one certain byte
    logits[2, 3] = logits[2, 9] = 60 << 12                       # two tied
    for thr in (1, 30000, 58982, 65535):
        assert (K.top_margin(logits, thr, second) ==
                numpy_only(K.top_margin, logits, thr, second)).all()


@pytest.mark.parametrize("path", ["scalar", "avx2", "avx512", "avx512-vnni"])
def test_int8_products_equal_blas_on_every_instruction_set(monkeypatch, path):
    """mm8 (the packed products) gives float32 BLAS's exact integers, on odd sizes, tails of
    rows and columns, the largest sums (K = 1024 of 127 x 127) and batches of experts."""
    monkeypatch.setenv("UMOEC_MM8", path)
    if K.mm8_path() != path:
        pytest.skip(f"this CPU cannot run {path}")
    assert K.use_mm8()
    rng = np.random.default_rng(8)
    for R, Kd, N in [(64, 96, 419), (7, 95, 17), (1, 1, 1), (5, 1024, 33), (0, 8, 16),
                     (9, 384, 96), (4, 2, 32)]:
        x = rng.integers(-127, 128, (R, Kd)).astype(np.float32)
        w = rng.integers(-127, 128, (Kd, N)).astype(np.float32)
        if R:
            x[0], w[:, 0], x[-1, ::2] = 127, 127, -127
        wp = K.pack8(w)
        assert wp is not None and wp.dtype == np.int16
        got = K.matmul8(x, w, wp)
        assert got.dtype == np.float32 and got.shape == (R, N) and (got == x @ w).all(), (R, Kd, N)
    xg = rng.integers(-127, 128, (3, 10, 40)).astype(np.float32)
    wg = rng.integers(-127, 128, (3, 40, 50)).astype(np.float32)
    assert (K.bmatmul8(xg, wg, K.pack8(wg)) == np.matmul(xg, wg)).all()


def test_int8_products_refuse_what_is_not_int8_and_leave_long_products_to_blas(monkeypatch):
    monkeypatch.setenv("UMOEC_MM8", "scalar")
    w = np.ones((4, 3), np.float32)
    for bad in (128.0, -128.0, np.nan, 0.5e9):
        x = np.zeros((2, 4), np.float32)
        x[1, 2] = bad
        with pytest.raises(ValueError, match="int8 values"):
            K.matmul8(x, w, K.pack8(w))
    assert K.pack8(np.ones((fx.CHUNK_K + 1, 3), np.float32)) is None   # fixed.matmul8's chunks
    monkeypatch.setenv("UMOEC_MM8", "blas")
    assert not K.use_mm8() and K.pack8(w) is None


@pytest.mark.parametrize("path", ["scalar", "best"])
def test_a_model_codes_the_same_with_blas_or_the_packed_products(monkeypatch, tiny_model, path):
    cfg = tiny_model.build_config()
    monkeypatch.setenv("UMOEC_MM8", "blas")
    blas = ExactModel(tiny_model.tensors, cfg)
    monkeypatch.setenv("UMOEC_MM8", "scalar")
    packed = ExactModel(tiny_model.tensors, cfg)
    assert blas.unembed.wp is None and packed.unembed.wp is not None
    monkeypatch.setenv("UMOEC_MM8", path)              # what the packed products run on
    data = np.frombuffer(b"def f(x):\n    return x + 1\n" * 4, np.uint8).reshape(4, -1)
    sb, sp = blas.init_state(4), packed.init_state(4)
    for t in range(data.shape[1]):
        assert (blas.step(data[:, t], sb)[0] == packed.step(data[:, t], sp)[0]).all()


@pytest.mark.parametrize("rate", [1, 32, 1 << 20])
def test_adaptation_steps(numpy_only, rate):
    """HeadAdapter.learn, step after step: A stays equal to the reference's, through confident
    rows, flat rows, unused rows and weights held at the A_BITS clamp."""
    from umoec.engine.adapt import A_BITS, HeadAdapter
    from umoec.engine.model import ExactModel
    rng = np.random.default_rng(rate)
    B, Cn = 24, 12
    got, want = HeadAdapter(Cn, rate), HeadAdapter(Cn, rate)
    for step in range(40):
        x8 = rng.integers(-127, 128, (B, Cn)).astype(np.float32)
        raw = rng.integers(-(1 << 16), 1 << 16, (B, 256)) * (rng.random((B, 1)) < 0.8)
        raw[0, 7] = 1 << 20                               # one sure byte
        raw[1] = 0                                        # all tied
        final = rng.random(B) < 0.7
        logits = ExactModel.finish(raw, final, x8, got)    # extra with this step's A, remember
        np.testing.assert_array_equal(logits, numpy_only(ExactModel.finish, raw, final, x8, want))
        if step == 20:                                    # near the clamp: it must hold there
            want.A[:] = got.A[:] = np.sign(got.A) * ((1 << A_BITS) - 3)
        y = rng.integers(0, 256, B)
        y[0] = 7
        got.learn(y)
        numpy_only(want.learn, y)
        np.testing.assert_array_equal(got.A, want.A, err_msg=f"step {step}")
        assert got.last is None and want.last is None and logits.dtype == np.int64
    assert np.abs(got.A).max() > 0


@pytest.mark.parametrize("B", [1, 6, 8])
def test_adaptation_extra(B):
    """The compiled correction (HeadAdapter.corrected with every row final and raw 0: rows in
    blocks of four, the last one partial) equals x A >> shift (HeadAdapter.extra), with A at
    both ends of its clamp and rows of +-127: the largest sums it can meet."""
    from umoec.engine.adapt import A_BITS, HeadAdapter
    rng = np.random.default_rng(B)
    a = HeadAdapter(96, 32)
    top = (1 << A_BITS) - 1
    a.A[:] = rng.integers(-top, top + 1, a.A.shape)
    a.A[:, :40] = top
    a.A[:, 40:80] = -top
    x = a.features(rng.integers(-127, 128, (B, 96)).astype(np.float32))
    x[0, :96] = 127
    x[-1, :48] = -127
    if C is None:
        pytest.skip("the compiled loops were not built")
    got = a.corrected(x, np.zeros((B, 256), np.int64), np.ones(B, bool), 62)
    np.testing.assert_array_equal(got, a.extra(x))
    assert got[0, 0] == (int(x[0].sum()) * top + (1 << 11)) >> 12 and got.dtype == np.int64


@pytest.mark.parametrize("B", [1, 6, 64])
def test_adaptation_corrected_logits(numpy_only, B):
    """HeadAdapter.corrected (the final head's rows in blocks of four, the others left as raw)
    equals clamp(raw + extra(x) * final): A at both ends of its clamp, raw past the logits'
    clamp on both sides, rows exited and not."""
    from umoec.engine.adapt import A_BITS, HeadAdapter
    from umoec.engine.model import LOGIT_BITS
    rng = np.random.default_rng(B + 100)
    a = HeadAdapter(96, 32)
    top = (1 << A_BITS) - 1
    a.A[:] = rng.integers(-top, top + 1, a.A.shape)
    a.A[:, :40] = top
    x = a.features(rng.integers(-127, 128, (B, 96)).astype(np.float32))
    x[0, :96] = 127
    raw = rng.integers(-(1 << 22), 1 << 22, (B, 256))
    final = rng.random(B) < 0.7
    final[0] = True
    got = a.corrected(x, raw, final, LOGIT_BITS)
    np.testing.assert_array_equal(got, numpy_only(a.corrected, x, raw, final, LOGIT_BITS))
    assert np.abs(got).max() == (1 << LOGIT_BITS) - 1 and got.dtype == np.int64
    if not final.all():
        r = np.flatnonzero(~final)[0]
        np.testing.assert_array_equal(got[r], np.clip(raw[r], 1 - (1 << LOGIT_BITS),
                                                      (1 << LOGIT_BITS) - 1))


def _engine(model, profile: str):
    from umoec.compress import profiles
    from umoec.engine.predictor import ExactPredictor
    prof = profiles.get(profile)
    return ExactPredictor(model, None, exit_threshold=prof.exit_threshold,
                          cascade_threshold=prof.cascade_threshold,
                          adapt_rate=prof.adapt_rate).engine


@pytest.mark.parametrize(("which", "profile", "B", "threads"),
                         [("shipped", "fast", 9, 1), ("shipped", "balanced", 3, 2),
                          ("shipped", "turbo", 40, 2), ("tiny", "balanced", 5, 1)])
def test_block_step_equals_the_python_path(tiny_model, monkeypatch, simd, which, profile, B,
                                           threads):
    """The compiled block (block_plan; block_apply: MoD router, block step, gated residual in
    place), exit (exit_apply) and cascade against Block.advance's, Block.step's,
    ExactModel._exit's and CascadeMixer.step's Python lines, step after step on real text:
    every block's conv and SSM state, and the logits. The shipped model has dense and MoE
    blocks, AdaLN and plain norms, and a MoD block (row subsets); turbo's exits and cascade
    leave rows out too; two threads split the mixer."""
    from umoec.compress import api
    model = api.open_model(None) if which == "shipped" else tiny_model
    fast, slow = _engine(model, profile), _engine(model, profile)
    if not any(b.plan is not None for b in fast.blocks):
        pytest.skip("no block of this model runs compiled here (products not made by mm8)")
    for blk in slow.blocks:
        blk.plan = None
    slow.head_plan = None                              # the exits' and the cascade's lines too
    if slow.cascade is not None:
        slow.cascade.plan = None
    for e in (fast, slow):
        e.set_threads(threads)
    text = np.frombuffer((b"Block.step, compiled: the same integers. " * 80)[:B * 60], np.uint8)
    cols = text.reshape(B, 60).T.astype(np.int64)
    sf, ss = fast.init_state(B), slow.init_state(B)
    calls, real = [], K.block_apply

    def counted(plan, h, *a):
        out = real(plan, h, *a)
        calls.append(out is not None)
        return out
    monkeypatch.setattr(K, "block_apply", counted)
    left, real_exit = [], K.exit_apply

    def exits(*a):
        out = real_exit(*a)
        left.append(-1 if out is None else len(out[0]))
        return out
    monkeypatch.setattr(K, "exit_apply", exits)
    for t, col in enumerate(cols):
        a, _ = fast.step(col, sf)
        b, _ = slow.step(col, ss)
        np.testing.assert_array_equal(a, b, err_msg=f"logits at step {t}")
        for i in range(len(fast.blocks)):
            np.testing.assert_array_equal(sf.ssm[i], ss.ssm[i], err_msg=f"ssm {i} step {t}")
            np.testing.assert_array_equal(sf.conv[i], ss.conv[i], err_msg=f"conv {i} step {t}")
    assert any(calls) and not all(calls)             # both paths ran
    if fast.exit_thr is not None and fast.exit_norms:
        assert -1 in left and max(left) > 0          # both exit paths ran, rows left early


def test_block_apply_leaves_out_a_router_score_of_exactly_zero():
    """A MoD block processes a row only when its router score r > 0: rows found with r == 0
    exactly, with rows either side of it, through the compiled turn and the Python lines."""
    from umoec.compress import api
    eng, ref = (_engine(api.open_model(None), "fast") for _ in range(2))
    blk = next((b for b in eng.blocks if b.mod_router is not None and b.plan is not None), None)
    if blk is None:
        pytest.skip("no MoD block runs compiled here")
    slow = ref.blocks[blk.index]
    slow.plan = None
    rng = np.random.default_rng(0)
    pool = rng.integers(-4096, 4096, (200000, eng.d.d_model))
    r = blk.route_score(pool)
    zero = pool[r == 0]
    assert len(zero) >= 1
    h = np.concatenate([zero, pool[r > 0][:3], pool[r < 0][:3]])
    alive = np.ones(len(h), dtype=bool)
    alive[-1] = False
    sf, ss = eng.init_state(len(h)), ref.init_state(len(h))
    i = blk.index
    a, b = h.copy(), h.copy()
    blk.advance(a, alive, sf.conv[i], sf.ssm[i], sf.mods.get(i), None)
    slow.advance(b, alive, ss.conv[i], ss.ssm[i], ss.mods.get(i), None)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(sf.ssm[i], ss.ssm[i])
    np.testing.assert_array_equal(a[:len(zero)], zero)               # r == 0: left as it was
    assert not np.array_equal(a[len(zero):len(zero) + 3], h[len(zero):len(zero) + 3])


def test_block_apply_refuses_mismatched_state():
    from umoec.compress import api
    eng = _engine(api.open_model(None), "fast")
    blk = next((b for b in eng.blocks if b.plan is not None), None)
    if blk is None:
        pytest.skip("no block runs compiled here")
    st = eng.init_state(4)
    i = blk.index
    h = np.zeros((4, eng.d.d_model), np.int64)
    with pytest.raises(ValueError, match="alive"):
        K.block_apply(blk.plan, h, st.conv[i], st.ssm[i], np.ones(3, bool), st.mods.get(i), 1)
    with pytest.raises(ValueError, match="conv"):
        K.block_apply(blk.plan, h, st.conv[i][:2], st.ssm[i], np.ones(4, bool), st.mods.get(i), 1)
    wrong = None if st.mods.get(i) is not None else np.zeros((6, eng.d.d_model), np.int64)
    with pytest.raises(ValueError, match="AdaLN"):
        K.block_apply(blk.plan, h, st.conv[i], st.ssm[i], np.ones(4, bool), wrong, 1)


def test_adaptation_refuses_a_byte_outside_the_alphabet():
    from umoec.engine.adapt import HeadAdapter
    a = HeadAdapter(4, 32)
    a.remember(a.features(np.zeros((2, 4), np.float32)), np.zeros((2, 256), np.int64),
               np.ones(2, bool))
    with pytest.raises(IndexError):
        a.learn(np.array([3, 256]))


@pytest.mark.parametrize("B", [1, 7])
def test_cascade_tables(numpy_only, B):
    """cascade.update_stats, step after step: statistics and every table equal the reference's,
    with runs and counts reaching their cap."""
    from umoec.engine import cascade as casc
    rng = np.random.default_rng(B)
    text = np.tile(rng.integers(0, 256, 4), 400)                   # repeats: runs reach the cap
    data = np.stack([np.roll(text, b) for b in range(B)], axis=1)
    data[:400][rng.random((400, B)) < 0.1] = 255                   # broken runs first
    got, want = casc.init_state(B), casc.init_state(B)
    for t, column in enumerate(data):
        a = casc.update_stats(column.astype(np.int64), got, t)
        b = numpy_only(casc.update_stats, column.astype(np.int64), want, t)
        for x, y in zip(a, b, strict=True):
            np.testing.assert_array_equal(x, y, err_msg=f"step {t}")
    for key in want:
        np.testing.assert_array_equal(got[key], want[key], err_msg=key)
    assert got["run"].max() == casc.CASCADE_CAP and got["cnt"].max() == casc.CASCADE_CAP


@pytest.mark.parametrize(("B", "thr"), [(1, None), (9, None), (5, 40000)])
def test_cascade_step_equals_the_python_path(B, thr):
    """CascadeMixer.step in one compiled call (cascade_plan / cascade_step) against its Python
    lines, step after step: alone and boost logits, the confidence flags and every table, with
    runs and counts reaching their cap and orders agreeing and disagreeing."""
    from umoec.compress import api
    from umoec.engine import cascade as casc
    fast = _engine(api.open_model(None), "turbo").cascade
    if fast is None or fast.plan is None:
        pytest.skip("the cascade's products are not made by mm8 here")
    slow = _engine(api.open_model(None), "turbo").cascade
    slow.plan = None
    rng = np.random.default_rng(B)
    pattern = rng.integers(1, 256, 5)
    pattern[0] = 0                             # byte 0: an order without prediction reads 0 too
    text = np.tile(pattern, 500)                                   # repeats: runs reach the cap
    data = np.stack([np.roll(text, b) for b in range(B)], axis=1)
    data[:300][rng.random((300, B)) < 0.2] = rng.integers(0, 256)  # broken runs first
    got, want = casc.init_state(B), casc.init_state(B)
    flags = 0
    for t, column in enumerate(data):
        if t % 700 == 699:                     # order 1 forgotten: higher orders predict alone
            for st in (got, want):
                st["last"][:, :casc.OFFSETS[1]] = 0
        a = fast.step(column.astype(np.int64), got, t, thr)
        b = slow.step(column.astype(np.int64), want, t, thr)
        for x, y, what in zip(a, b, ("alone", "boost", "flag"), strict=True):
            np.testing.assert_array_equal(x, y, err_msg=f"{what} at step {t}")
        flags += int(a[2].sum())
    for key in want:
        np.testing.assert_array_equal(got[key], want[key], err_msg=key)
    assert got["run"].max() == casc.CASCADE_CAP and np.abs(a[1]).max() > 0
    assert (flags > 0) == (thr is not None)


def test_cascade_step_refuses_a_byte_outside_the_alphabet():
    from umoec.compress import api
    from umoec.engine import cascade as casc
    mixer = _engine(api.open_model(None), "turbo").cascade
    if mixer is None or mixer.plan is None:
        pytest.skip("the cascade's products are not made by mm8 here")
    with pytest.raises(IndexError):
        mixer.step(np.array([3, 256]), casc.init_state(2), 0, None)


@pytest.mark.parametrize("act,bias", [(False, False), (True, True), (False, True)])
@pytest.mark.parametrize("R,Kn,N", [(1, 96, 419), (33, 7, 17), (0, 5, 3)])
def test_one_call_linear_equals_products_then_requant(numpy_only, act, bias, R, Kn, N):
    rng = np.random.default_rng(R + Kn + N)
    x8, amax = K.quant_rows(extreme_rows(rng, max(R, 4), Kn, 1 << 22)[:R])
    wt = rng.integers(-127, 128, (Kn, N)).astype(np.float32)
    m = rng.random(N) * 1e-2
    b = rng.integers(-(1 << 20), 1 << 20, N) if bias else None
    got = K.linear8(x8, amax, wt, K.pack8(wt), m, b, act)
    want = numpy_only(K.linear8, x8, amax, wt, K.pack8(wt), m, b, act)
    np.testing.assert_array_equal(got, want)
    assert got.shape == (R, N) and got.dtype == np.int64
    if not R:                                 # the BLAS path's requantisation of no rows
        assert K.requant(np.zeros((0, N), np.float32), amax, m, b, act).shape == (0, N)
    if R and K.pack8(wt) is not None:         # mm8's 16-bit pairs need int8 values; BLAS does not
        with pytest.raises(ValueError, match="int8"):
            K.linear8(x8 + 128, amax, wt, K.pack8(wt), m, b, act)
