"""The integer engine computes the float model's step form: same distributions up to rounding,
every stream on its own, and thresholds that are off stay off."""
import numpy as np
import pytest

from umoec.engine.model import ExactModel
from umoec.engine.predictor import ExactPredictor

TEXT = (b"import numpy as np\n\ndef step(self, byte, state):\n    return self.model(byte)\n" * 6)


def _rows(B=4):
    T = len(TEXT) // B
    return np.frombuffer(TEXT[:B * T], np.uint8).reshape(B, T).astype(np.int64)


def test_the_engine_tracks_the_float_step_form(tiny_ckpt, tiny_model):
    """Same bits per byte as torch's fp32 step form within 1% on the same bytes and streams."""
    import torch

    from umoec.model import build_model
    from umoec.train import checkpoint as ck
    state = ck.load(tiny_ckpt)
    cfg = ck.checkpoint_config(state, "tiny")
    model = build_model(cfg)
    model.load_state_dict(state["model"], strict=False)
    model.eval()
    x = _rows()
    B, T = x.shape
    g = np.linspace(-0.5, 0.5, cfg.head.d_globals).astype(np.float32)
    em = ExactModel(tiny_model.tensors, tiny_model.build_config())
    fs = model.init_state(B, torch.from_numpy(g)[None].expand(B, -1).contiguous())
    es = em.init_state(B, g)
    prev = np.zeros(B, np.int64)
    nats = {"float": 0.0, "exact": 0.0}
    for t in range(T):
        lf, fs = model.step(torch.from_numpy(prev), fs)
        le, es = em.step(prev, es)
        for name, logits in (("float", lf.double().numpy()), ("exact", le / 4096.0)):
            lse = np.log(np.exp(logits - logits.max(1, keepdims=True)).sum(1)) + logits.max(1)
            nats[name] += float((lse - logits[np.arange(B), x[:, t]]).sum())
        prev = x[:, t]
    assert abs(nats["exact"] / nats["float"] - 1) < 0.01, nats


def test_streams_do_not_influence_each_other(tiny_model):
    """Each stream's logits depend on its own bytes only (rows are quantised one by one)."""
    p = ExactPredictor(tiny_model, None)
    x = _rows(4)
    together, alone = p.init_state(4), p.init_state(1)
    for t in range(x.shape[1]):
        lt, together = p.step(x[:, t - 1] if t else np.zeros(4, np.int64), together)
        la, alone = p.step(x[2:3, t - 1] if t else np.zeros(1, np.int64), alone)
        assert (lt[2] == la[0]).all()


def test_same_inputs_same_logits_and_fingerprints(tiny_model):
    a, b = ExactPredictor(tiny_model, np.ones(8, np.float32)), \
        ExactPredictor(tiny_model, np.ones(8, np.float32))
    assert a.fingerprint() == b.fingerprint()
    assert ExactPredictor(tiny_model, None, exit_threshold=1.0).fingerprint() != a.fingerprint()
    sa, sb = a.init_state(3), b.init_state(3)
    for byte in b"abc\n\x00\xff":
        la, sa = a.step(np.full(3, byte), sa)
        lb, sb = b.step(np.full(3, byte), sb)
        assert la.dtype == np.float32 and (la == lb).all()
        assert (la * 4096 == np.rint(la * 4096)).all()          # exact multiples of 2**-12


def test_a_threshold_of_one_is_off_not_rounded():
    """A distribution 40 nats sharp rounds to p1 = 1 exactly in integers (and in float32): a
    threshold of 1.0 ("never") must therefore switch the shortcut off, not compare."""
    from umoec.engine.model import threshold_q, top_margin_at_least
    sharp = np.zeros((1, 256), np.int64)
    sharp[0, 7] = 40 << 12
    assert top_margin_at_least(sharp, 1 << 16, second=True)[0]
    assert threshold_q(1.0) is None and threshold_q(0.9) == round(0.9 * 65536)


@pytest.mark.parametrize("sets", [["conditioning.cross_attn=true"],
                                  ["conditioning.ada_ln_zero=false", "mod.enabled=false",
                                   "cascade.enabled=false", "early_exit.enabled=false"]])
def test_every_switch_exports_and_tracks_the_float_model(sets):
    """Configurations the tiers do not use (cross-attention to the global tokens; every optional
    component off): a randomly initialised model, exported, gives the float step form's
    distributions up to rounding."""
    import torch

    from tests.umoec.train.conftest import TINY
    from umoec import config as C
    from umoec.engine import modelfile as mf
    from umoec.engine.quantize import export_tensors
    from umoec.model import build_model
    cfg = C.load_preset("tier1_micro", TINY + sets)
    torch.manual_seed(3)
    model = build_model(cfg).eval()
    with torch.no_grad():
        for name, p in model.named_parameters():   # AdaLN-Zero starts at 0: give it something
            if "ada" in name or "globals" in name:
                p.normal_(0, 0.05)
    sd = {k: v.detach().numpy() for k, v in model.state_dict().items() if "lora_" not in k}
    m = mf.make("switches", C.to_dict(cfg), export_tensors(sd, cfg))
    em = ExactModel(m.tensors, m.build_config())
    x = _rows()
    B, T = x.shape
    g = np.linspace(-1, 1, cfg.head.d_globals).astype(np.float32)
    fs = model.init_state(B, torch.from_numpy(g)[None].expand(B, -1).contiguous())
    es = em.init_state(B, g)
    prev = np.zeros(B, np.int64)
    for t in range(T):
        lf, fs = model.step(torch.from_numpy(prev), fs)
        le, es = em.step(prev, es)
        pf = torch.softmax(lf.double(), -1).numpy()
        pe = np.exp(le / 4096.0 - (le / 4096.0).max(1, keepdims=True))
        pe /= pe.sum(1, keepdims=True)
        assert np.abs(pf - pe).max() < 0.02, t
        prev = x[:, t]
