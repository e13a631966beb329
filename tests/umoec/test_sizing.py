"""umoec.sizing: torch-free, and its parameter count is exactly the built model's."""
import subprocess
import sys

import pytest

from tests.conftest import ROOT
from umoec import config as C
from umoec import sizing

SWITCHES = [[], ["mod.enabled=false"], ["cascade.enabled=false"],
            ["early_exit.enabled=false", "head.n_early_exit_heads=0"],
            ["conditioning.ada_ln_zero=false"], ["conditioning.cross_attn=true"],
            ["patches.multi_token_predict=false"], ["patches.scales=[]"],
            ["lora.enabled=true"], ["lora.enabled=true", "lora.target=all"],
            ["lora.enabled=true", "lora.target=all", "conditioning.cross_attn=true"],
            ["moe.n_shared=0"], ["model.block_pattern=d", "mod.capacity=0.3"],
            ["model.d_model=80"], ["model.d_model=48", "conditioning.cross_attn=true"],
            ["head.d_globals=0", "conditioning.ada_ln_zero=false"], ["model.d_conv=1"]]


def model_params(cfg) -> int:
    import torch

    from umoec.model import build_model
    with torch.device("meta"):
        return sum(p.numel() for p in build_model(cfg).parameters())


def test_sizing_does_not_import_torch():
    code = ("import sys, umoec.sizing as s, umoec.config as C; "
            "s.total_params(C.load_preset('tier1_micro')); "
            "assert 'torch' not in sys.modules, 'torch imported'")
    res = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr


@pytest.mark.parametrize("tier", C.preset_names())
@pytest.mark.parametrize("switch", SWITCHES, ids=lambda s: ",".join(s) or "preset")
def test_param_count_equals_model(tier, switch):
    cfg = C.load_preset(tier, switch)
    assert sizing.total_params(cfg) == model_params(cfg)
    assert sum(sizing.param_breakdown(cfg).values()) == sizing.total_params(cfg)


def test_tier_sizes_grow_and_active_is_a_fraction():
    sizes = [C.load_preset(t) for t in ("tier1_micro", "tier2_small", "tier3_base")]
    totals = [sizing.total_params(c) for c in sizes]
    assert totals == sorted(totals)
    for cfg in sizes:
        active = sizing.active_params_per_byte(cfg)
        assert 0 < active < sizing.total_params(cfg)
        assert sizing.flops_per_byte(cfg) == pytest.approx(3 * sizing.flops_per_byte(cfg, False))
        assert sizing.training_memory_bytes(cfg) > 4 * sizing.total_params(cfg)
        assert sizing.tokens_per_step(cfg) == cfg.training.batch_size * cfg.training.seq_len


def test_active_params_follow_top_k_and_capacity():
    base = C.load_preset("tier1_micro")
    more_k = C.load_preset("tier1_micro", ["moe.top_k=4"])
    d = sizing.dims(base)
    expert = 2 * d.d_model * d.d_ff
    n_moe_full = sum(1 for k, m in zip(d.kinds, d.mod_blocks, strict=True) if k == "S" and not m)
    n_moe_mod = sum(1 for k, m in zip(d.kinds, d.mod_blocks, strict=True) if k == "S" and m)
    n_dense = d.kinds.count("D")        # a dense FFN is d_ff * (top_k + n_shared) wide
    expect = 2 * expert * (n_moe_full + base.mod.capacity * n_moe_mod + n_dense)
    assert sizing.active_params_per_byte(more_k) - sizing.active_params_per_byte(base) == \
        pytest.approx(expect)
    # an MoE block's parameters count every expert whatever top_k is; active ones do not
    assert sizing.block_params(more_k, 1)["ffn"] == sizing.block_params(base, 1)["ffn"]


def test_dims_follow_the_pattern():
    d = sizing.dims(C.load_preset("tier3_base"))
    assert d.kinds == "DSSSSS" * 2
    assert d.mod_blocks == (False, False, True, False, True, False) * 2
    assert d.d_inner == sizing.EXPAND * 512 and d.n_heads * d.head_dim == d.d_inner
    assert d.d_ff_dense == 512 * (4 + 2) and d.n_mtp == 3 and d.exit_blocks == (3, 7)
