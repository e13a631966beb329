"""The schema covers every spec WS1 field, with metadata the GUI and docs need, and no torch."""
import subprocess
import sys

from umoec import config as C

# Spec WS1, section by section (plus data.path and the top-level tier).
SPEC_FIELDS = {
    "model": ["d_model", "d_state", "d_conv", "n_blocks", "block_pattern", "context_len"],
    "moe": ["n_routed", "n_shared", "top_k", "d_ff", "bias_lr"],
    "mod": ["enabled", "capacity", "gate_kind"],
    "early_exit": ["enabled", "blocks", "exit_threshold", "exit_loss_weight"],
    "cascade": ["enabled", "threshold", "d_hidden"],
    "conditioning": ["ada_ln_zero", "ada_ln_blocks", "cross_attn"],
    "patches": ["primary", "scales", "multi_token_predict", "mtp_weight"],
    "head": ["d_globals", "n_early_exit_heads"],
    "training": ["steps", "batch_size", "seq_len", "grad_clip", "warmup_steps", "cosine_schedule",
                 "precision"],
    "optimizer.muon": ["lr", "momentum", "ns_steps"],
    "optimizer.adamw": ["lr", "betas", "weight_decay"],
    "loss": ["ce_weight", "mtp_weight"],
    "data": ["path", "pack_documents", "seed"],
    "lora": ["enabled", "rank", "alpha", "target", "trigger_bytes", "adapt_steps", "adapt_lr"],
    "entropy": ["coder", "block_size", "precision", "prob_precision", "probability_sharpening"],
    "logging": ["log_every", "eval_every", "save_every"],
    "hardware": ["gpus", "compile"],
}

# Fields of ours beyond WS1, each with a real effect (documented in docs/config.md), after the
# spec's fields of their section.
EXTRA_FIELDS = {"entropy": ["match_min_len"], "hardware": ["threads"]}

SPEC_WIDGETS = {  # the widget spec WS1 names for particular fields
    "mod.capacity": "slider", "mod.gate_kind": "dropdown", "mod.enabled": "switch",
    "model.block_pattern": "display", "early_exit.blocks": "list",
    "conditioning.ada_ln_blocks": "list", "patches.scales": "list",
    "optimizer.adamw.betas": "list", "training.precision": "dropdown", "lora.target": "dropdown",
    "entropy.coder": "dropdown", "model.d_model": "number", "hardware.compile": "switch",
}


def test_every_spec_section_and_field_is_in_the_schema():
    assert list(C.SECTION_TITLES) == list(SPEC_FIELDS)
    for section, names in SPEC_FIELDS.items():
        assert [f.name for f in C.section_fields(section)] == names + EXTRA_FIELDS.get(section, []), \
            section
    assert [f.key for f in C.all_fields() if f.section == ""] == ["tier"]


def test_every_field_has_description_default_and_a_sane_range():
    for f in C.all_fields():
        assert f.spec.description.endswith(".") and len(f.spec.description) > 15, f.key
        if f.kind in ("int", "float") and not f.spec.choices:
            assert f.spec.lo is not None and f.spec.hi is not None, f.key
            assert f.spec.lo <= f.default <= f.spec.hi, f.key
        if f.spec.choices:
            assert f.default in f.spec.choices, f.key


def test_widgets_and_component_ids_follow_the_spec():
    by_key = C.fields_by_key()
    for key, widget in SPEC_WIDGETS.items():
        assert by_key[key].widget == widget, key
    assert by_key["model.d_model"].component_id == "config-model-d-model"
    assert by_key["moe.n_routed"].component_id == "config-moe-n-routed"
    assert by_key["optimizer.adamw.betas"].component_id == "config-optimizer-adamw-betas"
    ids = [f.component_id for f in C.all_fields()]
    assert len(ids) == len(set(ids))


def test_defaults_validate_and_equal_tier1_micro():
    assert C.cross_check(C.Config()) == []
    assert C.load_preset("tier1_micro") == C.Config()


def test_config_module_imports_no_torch():
    code = "import sys, umoec.config; assert 'torch' not in sys.modules, 'torch imported'"
    subprocess.run([sys.executable, "-c", code], check=True)
