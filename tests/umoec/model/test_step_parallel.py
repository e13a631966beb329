"""The step form (the codec's only path) computes what the parallel form computes, for every
component mix the tiers use, including MoD's inference rule, early exits and the cascade."""
import pytest
import torch

from tests.umoec.model.helpers import run_steps, sample_bytes, threshold_between, tiny_cfg, tiny_model
from umoec.model import build_model
from umoec.model.heads import confidence

ATOL = 1e-4

COMBOS = {
    "tier1": ("tier1_micro", []),
    "tier2": ("tier2_small", []),
    "tier3": ("tier3_base", []),
    "cross_attn": ("tier1_micro", ["conditioning.cross_attn=true"]),
    "all_off": ("tier1_micro", ["mod.enabled=false", "early_exit.enabled=false",
                                "head.n_early_exit_heads=0", "cascade.enabled=false",
                                "conditioning.ada_ln_zero=false", "patches.scales=[]",
                                "patches.multi_token_predict=false", "patches.primary=1",
                                "model.block_pattern=D", "model.d_conv=1"]),
    "moe_no_shared": ("tier1_micro", ["moe.n_shared=0", "model.block_pattern=sS",
                                      "moe.top_k=1", "head.d_globals=0",
                                      "conditioning.ada_ln_zero=false"]),
}


def assert_forms_agree(model, x, g=None):
    model.eval()
    par = model(x, g).logits
    step = run_steps(model, x, g)
    torch.testing.assert_close(step, par, atol=ATOL, rtol=0)
    return par


def globals_for(model, batch):
    d = model.dims.d_globals
    return torch.randn(batch, d, generator=torch.Generator().manual_seed(3)) if d else None


def perturb_conditioning(model):
    """AdaLN-Zero starts at zero (identity); give it weight so conditioning is exercised."""
    with torch.no_grad():
        for blk in model.blocks:
            if blk.ada is not None:
                blk.ada.proj.weight.normal_(std=0.2)
                blk.ada.proj.bias.normal_(std=0.2)


@pytest.mark.parametrize("name", list(COMBOS))
def test_step_matches_parallel(name):
    tier, extra = COMBOS[name]
    model = tiny_model(tier, *extra)
    perturb_conditioning(model)
    x = sample_bytes(3, 70)      # 70 > the scan's 32-byte chunk, not a multiple; patches 4/16/64
    assert_forms_agree(model, x, globals_for(model, 3))


@pytest.mark.parametrize("tier", ["tier1_micro", "tier3_base"])
def test_step_matches_parallel_with_exits_and_cascade_taken(tier):
    """Thresholds set inside the observed confidences so that some bytes are coded by the
    cascade alone and some leave at every exit; the two forms still agree."""
    model = tiny_model(tier, "cascade.threshold=1.0", "early_exit.exit_threshold=1.0")
    perturb_conditioning(model)
    with torch.no_grad():  # make the cascade sure of itself on repeated contexts
        model.cascade.out.bias[:3] = 6.0
    x = sample_bytes(3, 64, seed=1)
    g = globals_for(model, 3)
    model.eval()
    casc_conf = model.cascade(x, torch.float32)[2]
    model.cascade_threshold = threshold_between(casc_conf, 0.7)
    for b in sorted(int(k) for k in model.heads.exit_norms):
        out = model(x, g, return_hidden=True)
        exit_conf = confidence(model.heads.exit(b, out.hidden[b]))
        model.exit_threshold = threshold_between(exit_conf, 0.6)
    out = model(x, g)
    assert 0.1 < out.cascade_fraction < 0.9
    assert sum(out.exit_fraction.values()) > 0.05
    assert all(0.0 < f < 1.0 for f in out.mod_fraction.values())
    assert_forms_agree(model, x, g)


def test_step_matches_parallel_with_lora_on():
    model = tiny_model("tier3_base", "lora.enabled=true")
    with torch.no_grad():
        for p in model.lora_parameters():
            p.normal_(std=0.1)
    model.set_lora(True)
    assert_forms_agree(model, sample_bytes(2, 40), globals_for(model, 2))


def test_parallel_eval_equals_infer_mode_and_train_mode_differs_only_by_mod():
    model = tiny_model("tier1_micro")
    x = sample_bytes(3, 48)
    model.train()
    train = model(x).logits
    model.eval()
    infer = model(x).logits
    torch.testing.assert_close(model(x, mode="infer").logits, infer)
    torch.testing.assert_close(model(x, mode="train").logits, train)
    assert not torch.allclose(train, infer)
    no_mod = tiny_model("tier1_micro", "mod.enabled=false")
    torch.testing.assert_close(no_mod(x, mode="train").logits, no_mod(x, mode="infer").logits)


def test_step_form_is_deterministic():
    model = tiny_model("tier1_micro").eval()
    x = sample_bytes(4, 40)
    first, second = run_steps(model, x), run_steps(model, x)
    assert torch.equal(first, second)


def test_step_state_clone_resumes_identically():
    model = tiny_model("tier1_micro").eval()
    x = sample_bytes(2, 30)
    state = model.init_state(2)
    for t in range(20):
        _, state = model.step(x[:, t], state)
    copy = state.clone()
    a = [model.step(x[:, t], state)[0] for t in range(20, 30)]
    b = [model.step(x[:, t], copy)[0] for t in range(20, 30)]
    assert all(torch.equal(u, v) for u, v in zip(a, b, strict=True))


def test_training_refuses_sequences_longer_than_context():
    cfg = tiny_cfg("tier1_micro", "model.context_len=32", "training.seq_len=32",
                   "patches.scales=4,16")
    model = build_model(cfg)
    model(torch.zeros(1, 32, dtype=torch.long), mode="train")
    with pytest.raises(ValueError, match="context_len"):
        model(torch.zeros(1, 33, dtype=torch.long), mode="train")
    # inference (and online adaptation on coded bytes) may run longer: an SSM has no position
    # limit, and the step form must agree with it there too
    model.eval()
    x = sample_bytes(2, 70)
    torch.testing.assert_close(run_steps(model, x), model(x).logits, atol=ATOL, rtol=0)
