"""Validation: types, ranges, choices and cross-field rules give messages a user can act on."""
import math

import pytest

from umoec import config as C


def errors_of(data) -> list[str]:
    with pytest.raises(C.ConfigError) as info:
        C.build(data, "test.yaml")
    return [i.message for i in info.value.issues]


def test_top_k_above_n_routed_names_both_keys():
    assert errors_of({"moe": {"top_k": 9, "n_routed": 8}}) == \
        ["moe.top_k=9 must be <= moe.n_routed=8"]


def test_error_text_names_the_file():
    with pytest.raises(C.ConfigError) as info:
        C.build({"moe": {"top_k": 9}}, "configs/mine.yaml")
    assert str(info.value) == "config error in configs/mine.yaml: moe.top_k=9 must be <= moe.n_routed=8"


@pytest.mark.parametrize("data, expected", [
    ({"model": {"d_model": "wide"}}, "model.d_model='wide' must be an integer"),
    ({"model": {"d_model": True}}, "model.d_model=True must be an integer, not true/false"),
    ({"model": {"d_model": 8}}, "model.d_model=8 must be >= 16"),
    ({"model": {"d_model": 10**12}}, "model.d_model=1000000000000 must be <= 8192"),
    ({"optimizer": {"adamw": {"lr": float("nan")}}}, "optimizer.adamw.lr=nan must be a finite number"),
    ({"optimizer": {"adamw": {"lr": -1}}}, "optimizer.adamw.lr=-1 must be >= 0"),
    ({"mod": {"enabled": "maybe"}}, "mod.enabled='maybe' must be true or false"),
    ({"mod": {"gate_kind": "vector"}}, "mod.gate_kind='vector' must be one of scalar"),
    ({"training": {"precision": "fp16"}}, "training.precision='fp16' must be one of fp32 | bf16 | bf16+fp8"),
    ({"entropy": {"precision": 48}}, "entropy.precision=48 must be one of 32 | 64"),
    ({"early_exit": {"blocks": "1,x"}},
     "early_exit.blocks='1,x' must be whole numbers separated by commas, e.g. 4,7"),
    ({"patches": {"scales": [4, 4]}}, "patches.scales=[4, 4] lists an entry twice"),
    ({"optimizer": {"adamw": {"betas": "0.9"}}},
     "optimizer.adamw.betas='0.9' must be two numbers, e.g. 0.9,0.95"),
    ({"optimizer": {"adamw": {"betas": [0.9, 1.5]}}}, "optimizer.adamw.betas entry 1.5 must be <= 0.99999"),
    ({"tier": 5}, "tier=5 must be text"),
    ({"training": {"steps": None}}, "training.steps is empty; expected int (1 .. 1000000000)"),
])
def test_field_errors(data, expected):
    assert errors_of(data) == [expected]


@pytest.mark.parametrize("data, key", [
    ({"model": {"n_blocks": 2}, "early_exit": {"blocks": [1]}}, "early_exit.blocks"),
    ({"early_exit": {"blocks": [0, 1, 2]}}, "head.n_early_exit_heads"),
    ({"early_exit": {"blocks": []}}, "early_exit.blocks"),
    ({"conditioning": {"ada_ln_blocks": [0, 7]}}, "conditioning.ada_ln_blocks"),
    ({"conditioning": {"ada_ln_blocks": []}}, "conditioning.ada_ln_blocks"),
    ({"head": {"d_globals": 0}}, "head.d_globals"),
    ({"patches": {"scales": [3]}}, "patches.scales"),
    ({"patches": {"primary": 1}}, "patches.primary"),
    ({"training": {"seq_len": 512}}, "training.seq_len"),
    ({"training": {"warmup_steps": 5000}}, "training.warmup_steps"),
    ({"entropy": {"prob_precision": 20}}, "entropy.prob_precision"),
    ({"model": {"block_pattern": "SXS"}}, "model.block_pattern"),
    ({"model": {"block_pattern": ""}}, "model.block_pattern"),
])
def test_cross_field_rules(data, key):
    with pytest.raises(C.ConfigError) as info:
        C.build(data)
    assert [i.key for i in info.value.issues] == [key]
    assert key in str(info.value)


def test_cross_rules_release_when_the_feature_is_off():
    cfg = C.build({"early_exit": {"enabled": False, "blocks": []},
                   "conditioning": {"ada_ln_zero": False, "ada_ln_blocks": []},
                   "head": {"d_globals": 0}, "patches": {"multi_token_predict": False,
                                                         "primary": 1}})
    assert cfg.early_exit.blocks == [] and cfg.head.d_globals == 0


def test_unknown_keys_are_errors_with_suggestions():
    msgs = errors_of({"moe": {"topk": 2}, "modle": {}, "extra": 1})
    assert msgs == ["unknown key moe.topk (did you mean moe.top_k?)",
                    "unknown key modle (did you mean model?)", "unknown key extra"]


def test_wrong_shapes_are_errors():
    assert errors_of([1, 2]) == ["the config must be a mapping of keys to values, got list [1, 2]"]
    assert errors_of({"model": 5}) == ["model must be a mapping of keys to values, got int 5"]


def test_lenient_inputs_are_normalised():
    cfg = C.build({"optimizer": {"adamw": {"lr": "3e-3", "betas": "0.8, 0.9"}},
                   "early_exit": {"blocks": 2}, "model": {"n_blocks": 6, "d_model": 256.0},
                   "conditioning": {"ada_ln_blocks": "[3, 0]"}, "mod": {"enabled": "off"}})
    assert cfg.optimizer.adamw.lr == 3e-3 and cfg.optimizer.adamw.betas == (0.8, 0.9)
    assert cfg.early_exit.blocks == [2] and cfg.conditioning.ada_ln_blocks == [0, 3]
    assert cfg.model.d_model == 256 and isinstance(cfg.model.d_model, int)
    assert cfg.mod.enabled is False


def test_all_field_errors_are_reported_together():
    msgs = errors_of({"model": {"d_model": -1, "d_state": 0}, "moe": {"bias_lr": math.inf}})
    assert len(msgs) == 3


def test_coerce_serves_the_gui_one_field_at_a_time():
    f = C.fields_by_key()["mod.capacity"]
    assert C.coerce(f, 0.25) == 0.25
    with pytest.raises(C.FieldError, match=r"mod.capacity=2 must be <= 1"):
        C.coerce(f, 2)


def test_warnings_do_not_block():
    cfg = C.build({"model": {"block_pattern": "DS"}, "training": {"precision": "bf16"}})
    assert [w.key for w in C.warnings(cfg)] == ["mod.enabled", "training.precision"]
