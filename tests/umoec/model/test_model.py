"""Model behaviour: outputs and statistics, parameter groups, balancing, LoRA, every config
switch, a gradient check of the whole model, every tier builds."""
import math

import pytest
import torch

from tests.umoec.model.helpers import sample_bytes, tiny_cfg, tiny_model
from umoec import config as C
from umoec import sizing
from umoec.model import ModelOutput, build_model, losses
from umoec.model.cascade import Cascade, bucket, context_stats
from umoec.sizing import CASCADE_CAP, CASCADE_ORDERS


def test_forward_output_fields():
    model = tiny_model("tier3_base")
    x = sample_bytes(2, 40)
    y = torch.roll(x, -1, dims=1)
    y[:, -1] = -1
    out = model(x, targets=y, return_hidden=True)
    assert isinstance(out, ModelOutput) and out.mode == "train"
    assert out.logits.shape == (2, 40, 256)
    assert out.loss.ndim == 0 and math.isfinite(out.loss.item())
    assert set(out.head_losses) == {"final", "exit_3", "exit_7", "mtp_1", "mtp_2", "mtp_3",
                                    "cascade"}
    for v in out.head_losses.values():  # untrained: about ln 256 nats per byte
        assert 4.0 < v.item() < 7.0
    kinds = model.dims.kinds
    moe_blocks = {i for i, k in enumerate(kinds) if k == "S"}
    assert set(out.moe_load) == set(out.moe_bias) == moe_blocks
    for load in out.moe_load.values():
        assert load.shape == (6,) and abs(load.sum().item() - 1) < 1e-5
    mod_blocks = {i for i, m in enumerate(model.dims.mod_blocks) if m}
    assert set(out.mod_fraction) == set(out.mod_fraction_inference) == mod_blocks
    assert all(abs(f - 0.5) < 0.05 for f in out.mod_fraction.values())   # top-capacity
    assert set(out.aux_losses) == {f"mod_{i}" for i in mod_blocks}
    assert set(out.exit_fraction) == {3, 7}
    assert len(out.hidden) == 12 and all(h.shape == (2, 40, 32) for h in out.hidden)
    assert 0.0 <= out.cascade_fraction <= 1.0


def test_loss_is_the_documented_sum():
    cfg = tiny_cfg("tier1_micro", "loss.ce_weight=0.7", "loss.mtp_weight=0.2",
                   "early_exit.exit_loss_weight=0.4", "patches.primary=3",
                   "patches.mtp_weight=0.5")
    torch.manual_seed(0)
    model = build_model(cfg)
    x = sample_bytes(2, 32)
    out = model(x, targets=torch.roll(x, -1, 1))
    hl = out.head_losses
    mtp = (0.5 * hl["mtp_1"] + 0.25 * hl["mtp_2"]) / 0.75
    aux = torch.stack(list(out.aux_losses.values())).mean()
    expect = (0.7 * hl["final"] + 0.4 * hl["exit_1"] + 0.2 * mtp
              + losses.CASCADE_LOSS_WEIGHT * hl["cascade"] + losses.MOD_AUX_WEIGHT * aux)
    torch.testing.assert_close(out.loss, expect)


def test_ignored_targets_do_not_count():
    model = tiny_model("tier1_micro", "cascade.enabled=false")
    x = sample_bytes(1, 16)
    y = torch.roll(x, -1, 1)
    full = model(x, targets=y, mode="infer").head_losses["final"]
    y2 = y.clone()
    y2[:, 8:] = -1
    half = model(x, targets=y2, mode="infer").head_losses["final"]
    logp = torch.log_softmax(model(x, mode="infer").logits, -1)
    expect = -logp[0, torch.arange(8), y[0, :8]].mean()
    torch.testing.assert_close(half, expect)
    assert not torch.isclose(full, half)


def test_param_groups_partition_all_but_lora():
    model = tiny_model("tier3_base", "lora.enabled=true", "conditioning.cross_attn=true")
    muon, decay, no_decay = model.param_groups()
    ids = [id(p) for p in muon + decay + no_decay]
    assert len(ids) == len(set(ids))
    lora = {id(p) for p in model.lora_parameters()}
    assert lora and not (lora & set(ids))
    assert set(ids) | lora == {id(p) for p in model.parameters()}
    assert all(p.ndim == 2 for p in muon)
    names = {id(p): n for n, p in model.named_parameters()}
    assert all(p.ndim == 1 or names[id(p)].endswith("bias") for p in no_decay)
    for n in ("A_log", "D", "dt_bias", "norm"):
        assert any(n in names[id(p)] for p in no_decay)
    assert {"embed.byte.weight", "heads.unembed.weight"} <= {names[id(p)] for p in decay}


def test_balancing_bias_moves_toward_balance():
    model = tiny_model("tier1_micro")
    moe = model.blocks[1].ffn
    load = torch.tensor([0.7, 0.1, 0.1, 0.1])
    out = ModelOutput(logits=torch.zeros(1), moe_load={1: load})
    model.update_balancing_bias(out)
    lr = C.load_preset("tier1_micro").moe.bias_lr
    torch.testing.assert_close(moe.bias, torch.tensor([-lr, lr, lr, lr]))
    assert not any(p is moe.bias for p in model.parameters())     # a buffer, no gradient
    assert "blocks.1.ffn.bias" in model.state_dict()


def test_balancing_bias_steers_routing():
    model = tiny_model("tier1_micro")
    x = sample_bytes(3, 48)
    before = model(x).moe_load[1]
    model.blocks[1].ffn.bias[0] = 10.0       # every byte now picks expert 0
    after = model(x).moe_load[1]
    assert after[0] == pytest.approx(0.5)    # top_k = 2: half of all slots
    assert before[0] < 0.5


@pytest.mark.parametrize("n_tokens", [1, 7, 64])
def test_batched_experts_equal_the_expert_loop(n_tokens):
    moe = tiny_model("tier1_micro").blocks[1].ffn
    u = torch.randn(n_tokens, moe.router.in_features, generator=torch.Generator().manual_seed(4))
    with torch.no_grad():
        moe.bias[0] = 10.0                     # expert 0 takes every token: uneven loads
        loop, _ = moe(u, counts=False)
        batched, _ = moe(u, counts=False, batched=True)
        torch.testing.assert_close(batched, loop, atol=1e-5, rtol=1e-5)
        moe.experts[0].w1.weight.mul_(2.0)   # the stacked weights follow a weight change
        torch.testing.assert_close(moe(u, counts=False, batched=True)[0], moe(u, counts=False)[0],
                                   atol=1e-5, rtol=1e-5)


def test_lora_switch_and_reset():
    model = tiny_model("tier1_micro", "lora.enabled=true")
    model.eval()
    x = sample_bytes(2, 24)
    base = model(x).logits
    params = model.lora_parameters()
    # routed target: two matrices per routed expert in each MoE block, (A, B) each
    n_moe = model.dims.kinds.count("S")
    assert len(params) == 2 * 2 * model.dims.n_routed * n_moe
    torch.manual_seed(123)                       # adapters are seeded, not from torch's RNG
    fresh = build_model(tiny_cfg("tier1_micro", "lora.enabled=true")).lora_parameters()
    assert all(torch.equal(p, q) for p, q in zip(params, fresh, strict=True))
    model.set_lora(True)
    torch.testing.assert_close(model(x).logits, base)            # B = 0: no effect yet
    with torch.no_grad():
        for p in params:
            p.add_(torch.randn_like(p) * 0.1)
    assert not torch.allclose(model(x).logits, base)
    model.set_lora(False)
    torch.testing.assert_close(model(x).logits, base)            # switched off
    model.set_lora(True)
    model.reset_lora()                                           # back to the seeded start
    assert all(torch.equal(p, q) for p, q in zip(params, fresh, strict=True))
    torch.testing.assert_close(model(x).logits, base)


def test_lora_target_all_adapts_every_block_matrix():
    routed = tiny_model("tier1_micro", "lora.enabled=true")
    every = tiny_model("tier1_micro", "lora.enabled=true", "lora.target=all")
    assert len(every.lora_parameters()) > len(routed.lora_parameters())


def test_conditioning_on_globals_changes_output():
    model = tiny_model("tier1_micro").eval()
    x = sample_bytes(2, 24)
    g = torch.randn(2, model.dims.d_globals)
    torch.testing.assert_close(model(x, g).logits, model(x).logits)   # AdaLN-Zero starts as identity
    with torch.no_grad():
        model.blocks[0].ada.proj.weight.normal_(std=0.5)
    assert not torch.allclose(model(x, g).logits, model(x).logits)
    with pytest.raises(ValueError, match="shape"):
        model(x, torch.zeros(2, 3))
    xattn = tiny_model("tier1_micro", "conditioning.cross_attn=true").eval()
    assert not torch.allclose(xattn(x, g).logits, xattn(x).logits)


def _brute_force_stats(row: list[int], t: int, order: int):
    """(pred, run, cnt, has) at position t from the definition, with the model's buckets."""
    def key(s):
        value = sum((row[s - i] if s - i >= 0 else 256) * 257 ** i for i in range(order))
        return int(bucket(torch.tensor(value), order))
    same = [s for s in range(t) if key(s) == key(t)]
    if not same:
        return 0, 0, 0, False
    nxt = [row[s + 1] for s in same]
    run = 1
    while run < len(nxt) and nxt[-run - 1] == nxt[-1]:
        run += 1
    return nxt[-1], min(run, CASCADE_CAP), min(len(same), CASCADE_CAP), True


def test_cascade_statistics_are_exact_in_both_forms():
    x = sample_bytes(3, 80, seed=5)
    pred, run, cnt, has = context_stats(x)
    for b in range(3):
        row = x[b].tolist()
        for t in range(80):
            for k_i, order in enumerate(CASCADE_ORDERS):
                got = (int(pred[b, t, k_i]), int(run[b, t, k_i]), int(cnt[b, t, k_i]),
                       bool(has[b, t, k_i]))
                assert got == _brute_force_stats(row, t, order), (b, t, order)
    assert has[..., 0].float().mean() > 0.5                     # contexts do repeat
    st = Cascade.init_state(3, "cpu")
    for t in range(80):
        p, r, c, h = Cascade.update_stats(x[:, t], st, t)
        assert torch.equal(p, pred[:, t]) and torch.equal(r, run[:, t])
        assert torch.equal(c, cnt[:, t]) and torch.equal(h, has[:, t])


def test_patch_embedding_uses_only_complete_past_patches():
    model = tiny_model("tier1_micro")
    x = sample_bytes(1, 40)
    base = model.embed(x)
    x2 = x.clone()
    x2[0, 20] = (x2[0, 20] + 1) % 256
    changed = ((model.embed(x2) - base).abs().sum(-1)[0] > 0).nonzero().flatten().tolist()
    # byte 20 itself; the 4-patch [20, 24) is the last complete one at t = 23..26; the
    # 16-patch [16, 32) at t = 31..46
    assert changed == [20, 23, 24, 25, 26] + list(range(31, 40))


# -- every config field has an effect --------------------------------------------------------
PARAM_SWITCHES = ["mod.enabled=false", "cascade.enabled=false", "conditioning.ada_ln_zero=false",
                  "conditioning.cross_attn=true", "patches.multi_token_predict=false",
                  "lora.enabled=true", "model.d_state=8", "model.d_conv=2", "model.n_blocks=5",
                  "model.block_pattern=DSSS", "moe.n_routed=6", "moe.n_shared=2",
                  "moe.top_k=1", "moe.d_ff=32", "cascade.d_hidden=4",
                  "conditioning.ada_ln_blocks=[0]", "patches.primary=3", "patches.scales=[4]",
                  "head.d_globals=4", "model.d_model=48"]
OUTPUT_SWITCHES = [("early_exit.exit_threshold=0.0", ""), ("cascade.threshold=0.0", ""),
                   ("mod.capacity=0.25", ""),
                   # blocks 0 and 1 start as AdaLN-Zero identities: compare without them
                   ("early_exit.blocks=[0]", "early_exit.exit_threshold=0.0 "
                                             "conditioning.ada_ln_zero=false")]
LOSS_SWITCHES = ["loss.ce_weight=0.5", "loss.mtp_weight=1.0", "patches.mtp_weight=0.9",
                 "early_exit.exit_loss_weight=1.0"]


def _count(model):
    return sum(p.numel() for p in model.parameters())


@pytest.mark.parametrize("override", PARAM_SWITCHES)
def test_switch_changes_parameter_count(override):
    base, other = tiny_model("tier1_micro"), tiny_model("tier1_micro", override)
    assert _count(base) != _count(other)


@pytest.mark.parametrize("override,both", OUTPUT_SWITCHES)
def test_switch_changes_output(override, both):
    x = sample_bytes(3, 40)
    common = ["patches.primary=3"] + both.split()
    base = tiny_model("tier1_micro", *common)
    other = tiny_model("tier1_micro", *common, override)
    mode = "train" if override.startswith("mod.") else "infer"
    assert _count(base) == _count(other)
    assert not torch.allclose(base(x, mode=mode).logits, other(x, mode=mode).logits)


@pytest.mark.parametrize("override", LOSS_SWITCHES)
def test_switch_changes_loss(override):
    x = sample_bytes(3, 40)
    y = torch.roll(x, -1, 1)
    base = tiny_model("tier1_micro", "patches.primary=3")
    other = tiny_model("tier1_micro", "patches.primary=3", override)
    assert not torch.isclose(base(x, targets=y).loss, other(x, targets=y).loss)


def test_exit_switch_changes_heads_and_bias_lr_changes_update():
    x = sample_bytes(2, 24)
    y = torch.roll(x, -1, 1)
    off = tiny_model("tier1_micro", "early_exit.enabled=false", "head.n_early_exit_heads=0")
    assert "exit_1" not in off(x, targets=y).head_losses
    assert _count(off) != _count(tiny_model("tier1_micro"))
    fast = tiny_model("tier1_micro", "moe.bias_lr=0.1")
    out = fast(x)
    fast.update_balancing_bias(out)
    assert fast.blocks[1].ffn.bias.abs().max() == pytest.approx(0.1)


def test_context_len_bounds_training_sequences():
    model = tiny_model("tier1_micro", "model.context_len=64", "training.seq_len=64")
    model(torch.zeros(1, 64, dtype=torch.long), mode="train")
    with pytest.raises(ValueError):
        model(torch.zeros(1, 65, dtype=torch.long), mode="train")
    assert model(torch.zeros(1, 65, dtype=torch.long), mode="infer").logits.shape[1] == 65


# -- gradients -------------------------------------------------------------------------------
def test_whole_model_gradient_check():
    """Directional derivative of the full training loss (every component on) in float64:
    autograd's gradient . v equals a central finite difference along a random v."""
    model = tiny_model("tier1_micro", "model.d_model=16", "moe.d_ff=8").double()
    perturb = torch.Generator().manual_seed(7)
    with torch.no_grad():
        for blk in model.blocks:
            if blk.ada is not None:
                blk.ada.proj.weight.normal_(std=0.3, generator=perturb)
    x = sample_bytes(2, 24)
    y = torch.roll(x, -1, 1)
    g = torch.randn(2, model.dims.d_globals, dtype=torch.float64, generator=perturb)
    params = list(model.parameters())
    loss = model(x, g, targets=y, mode="infer").loss
    grads = torch.autograd.grad(loss, params, allow_unused=True)
    v = [torch.randn(p.shape, dtype=torch.float64, generator=perturb) for p in params]
    analytic = sum((gr * d).sum() for gr, d in zip(grads, v, strict=True) if gr is not None)
    eps = 1e-6

    def loss_at(sign):
        with torch.no_grad():
            for p, d in zip(params, v, strict=True):
                p.add_(sign * eps * d)
            value = model(x, g, targets=y, mode="infer").loss.item()
            for p, d in zip(params, v, strict=True):
                p.sub_(sign * eps * d)
        return value

    numeric = (loss_at(1) - loss_at(-1)) / (2 * eps)
    assert analytic.item() == pytest.approx(numeric, rel=1e-5)
    unused = [n for (n, _), gr in zip(model.named_parameters(), grads, strict=True) if gr is None]
    assert unused == []           # every parameter takes part in the loss


# -- tiers ---------------------------------------------------------------------------------
@pytest.mark.parametrize("tier", ["tier1_micro", "tier2_small"])
def test_tier_builds_and_runs(tier):
    cfg = C.load_preset(tier)
    torch.manual_seed(0)
    model = build_model(cfg)
    assert _count(model) == sizing.total_params(cfg)
    x = torch.randint(0, 256, (1, 64))
    out = model(x, targets=torch.roll(x, -1, 1))
    out.loss.backward()
    state = model.init_state(2)
    logits, _ = model.step(torch.tensor([1, 2]), state)
    assert logits.shape == (2, 256)


def test_tier3_counts_on_meta_device():
    cfg = C.load_preset("tier3_base")
    with torch.device("meta"):
        model = build_model(cfg)
    assert _count(model) == sizing.total_params(cfg)


@pytest.mark.slow
def test_tier3_builds_for_real():
    cfg = C.load_preset("tier3_base")
    torch.manual_seed(0)
    model = build_model(cfg)          # ~206 M parameters, ~0.8 GB in fp32
    assert _count(model) == sizing.total_params(cfg)
    with torch.no_grad():
        out = model(torch.randint(0, 256, (1, 16)))
    assert out.logits.shape == (1, 16, 256)


def test_cascade_counters_saturate_identically():
    x = torch.full((1, 600), 97, dtype=torch.long)        # one context repeated 599 times
    x[0, 300] = 98
    pred, run, cnt, _has = context_stats(x)
    assert int(cnt[0, -1, 0]) == CASCADE_CAP and int(run[0, 299, 0]) == CASCADE_CAP
    st = Cascade.init_state(1, "cpu")
    for t in range(600):
        p, r, c, _h = Cascade.update_stats(x[:, t], st, t)
        assert (p.tolist(), r.tolist(), c.tolist()) == (pred[:, t].tolist(), run[:, t].tolist(),
                                                        cnt[:, t].tolist())


def test_bf16_autocast_trains():
    """Tiers 2 and 3 train under bf16 autocast: the scan and the cascade stay in fp32."""
    model = tiny_model("tier3_base")
    x = sample_bytes(2, 40)
    y = torch.roll(x, -1, 1)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = model(x, targets=y)
    out.loss.backward()
    reference = model(x, targets=y).loss
    assert out.loss.item() == pytest.approx(reference.item(), rel=0.02)
    assert all(torch.isfinite(p.grad).all() for p in model.parameters() if p.grad is not None)
