"""Configs for the Architecture and Growth tests: presets with dotted-key changes, checked like
the sidebar checks them, and the variants every diagram test walks through."""
from gui import form
from umoec import config as C


def cfg_with(tier="tier1_micro", **changes) -> C.Config:
    """A preset with dotted-key changes, checked like the sidebar checks it."""
    values = form.preset_values(tier)
    values.update({k.replace("__", "."): v for k, v in changes.items()})
    result = form.check(values, tier)
    assert result.ok, result.errors
    return result.config


VARIANTS = {
    "tier1": cfg_with(),
    "tier2": cfg_with("tier2_small"),
    "tier3": cfg_with("tier3_base"),
    "xattn_lora": cfg_with(**{"conditioning.cross_attn": True, "lora.enabled": True,
                              "lora.target": "all"}),
    "mod_off_no_extras": cfg_with(**{"mod.enabled": False, "cascade.enabled": False,
                                     "patches.multi_token_predict": False,
                                     "early_exit.enabled": False, "head.n_early_exit_heads": 0,
                                     "conditioning.ada_ln_zero": False}),
    "24_blocks": cfg_with("tier2_small", **{"model.n_blocks": 24, "model.block_pattern": "sDdS",
                                            "early_exit.blocks": "3,11,20",
                                            "head.n_early_exit_heads": 3}),
}
