"""The config editor's model (gui/form.py) and callbacks bodies, without a browser."""
import pytest

from gui import form
from gui import ids as common
from gui.pages.sidebar import callbacks as cc
from gui.pages.sidebar import ids
from gui.pages.sidebar import layout as config_panel
from gui.services import presets
from gui.view import derived
from umoec import config as C
from umoec import sizing
from umoec.units import fmt_count


@pytest.mark.parametrize("tier", C.preset_names())
def test_every_preset_round_trips_through_the_form(tier):
    cfg = C.load_preset(tier)
    result = form.check(form.form_values(cfg), cfg.tier)
    assert result.ok and C.to_dict(result.config) == C.to_dict(cfg)


def test_form_covers_every_field_of_the_tier1_yaml_with_spec_ids():
    keys = {f.key for f in form.FIELDS}
    flat = set()

    def walk(d, prefix=""):
        for k, v in d.items():
            if isinstance(v, dict):
                walk(v, f"{prefix}{k}.")
            else:
                flat.add(prefix + k)
    walk(C.to_dict(C.load_preset("tier1_micro")))
    assert flat - {"tier"} == keys
    by_id = {f.component_id: f for f in form.FIELDS}
    assert len(by_id) == len(form.FIELDS)
    assert by_id["config-model-d-model"].key == "model.d_model"
    assert by_id["config-moe-n-routed"].key == "moe.n_routed"
    assert by_id["config-optimizer-adamw-betas"].widget == "list"
    assert by_id["config-mod-capacity"].widget == "slider"
    assert all(form.BY_KEY[k].kind == "bool" for k in form.COMPONENTS)


def test_layout_has_one_widget_per_field_and_17_sections():
    layout = config_panel.layout()
    found = set()

    def walk(node):
        cid = getattr(node, "id", None)
        if isinstance(cid, str):
            found.add(cid)
        children = getattr(node, "children", None)
        for child in children if isinstance(children, list) else [children]:
            if child is not None and hasattr(child, "to_plotly_json"):
                walk(child)
    walk(layout)
    assert {f.component_id for f in form.FIELDS} <= found
    assert {ids.section_item_id(s) for s in C.section_names()} <= found
    assert len(C.section_names()) == 17
    for spec_id in (ids.CONFIG_START, ids.CONFIG_STOP, ids.CONFIG_STATUS, common.CONFIG_TIER):
        assert spec_id in found


def test_field_and_cross_field_errors_name_the_key():
    values = form.default_values()
    values["model.d_model"] = 3
    values["optimizer.adamw.betas"] = "0.9"
    values["training.steps"] = None
    result = form.check(values, "tier1_micro")
    assert not result.ok
    assert result.errors["model.d_model"] == "model.d_model=3 must be >= 16"
    assert "two numbers" in result.errors["optimizer.adamw.betas"]
    assert "training.steps is empty" in result.errors["training.steps"]
    values = form.default_values()
    values["moe.top_k"] = 9
    assert form.check(values, "tier1_micro").errors == {
        "moe.top_k": "moe.top_k=9 must be <= moe.n_routed=8"}
    values = form.default_values()
    values["training.precision"] = "bf16"
    assert "training.precision" in form.check(values, "tier1_micro").warnings


def test_check_marks_fields_counts_errors_per_section_and_blocks_start():
    values = form.default_values()
    values["moe.top_k"] = 9
    out = cc.check(values, "tier1_micro")
    assert out["invalid"]["moe.top_k"] is True and out["invalid"]["moe.n_routed"] is False
    assert out["start_disabled"] is True
    assert "1 error" in str(out["titles"]["moe"]) and out["titles"]["model"] == "Model"
    assert "moe.top_k=9" in str(out["messages"]["moe.top_k"])
    assert out["store"]["values"]["moe.top_k"] == 9
    ok = cc.check(form.default_values(), "tier1_micro")
    assert ok["start_disabled"] is False and "Config valid" in str(ok["summary"])
    assert [t.name for t in ok["lr"].data] == ["AdamW", "Muon"]


def test_yaml_with_bad_values_loads_into_the_form_and_is_marked(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("tier: mine\nmoe:\n  top_k: 99\n  n_routed: 8\nbogus: 1\n"
                    "optimizer:\n  adamw:\n    lr: 3e-3\n    betas: [0.8, 0.9]\n")
    loaded = form.load_file(path)
    assert loaded.tier == "mine" and loaded.notes == ["unknown key bogus ignored"]
    assert loaded.values["moe.top_k"] == 99
    assert loaded.values["optimizer.adamw.lr"] == 0.003
    assert loaded.values["optimizer.adamw.betas"] == "0.8,0.9"
    assert "moe.top_k" in form.check(loaded.values, loaded.tier).errors
    assert {"label": "mine (loaded)", "value": "mine"} in presets.tier_options("mine")


def test_save_refuses_invalid_forms_and_odd_paths(tmp_path):
    good = form.default_values()
    path = form.save_file(good, "tier1_micro", tmp_path / "ok.yaml")
    assert C.load(path) == C.load_preset("tier1_micro")
    bad = dict(good, **{"moe.top_k": 9})
    with pytest.raises(form.FormFileError, match="1 error"):
        form.save_file(bad, "tier1_micro", tmp_path / "bad.yaml")
    with pytest.raises(form.FormFileError, match=r"\.yaml or \.yml"):
        form.save_file(good, "tier1_micro", tmp_path / "notes.txt")
    with pytest.raises(form.FormFileError, match="does not exist"):
        form.save_file(good, "tier1_micro", tmp_path / "nope" / "x.yaml")
    with pytest.raises(form.FormFileError, match="type a file path"):
        form.resolve_path("  ")
    assert form.resolve_path("a.yaml", tmp_path) == tmp_path / "a.yaml"


def test_save_asks_before_overwriting_and_never_overwrites_a_shipped_preset(tmp_path):
    from gui.pages.sidebar.callbacks import save_action
    from umoec.config.io import PRESET_DIR
    good = form.default_values()
    target = tmp_path / "mine.yaml"
    target.write_text("# my notes\n")
    status, pending = save_action(good, "tier1_micro", str(target), None)
    assert "already exists: press Save Config again" in str(status.children)
    assert pending == str(target) and target.read_text() == "# my notes\n"
    status, pending = save_action(good, "tier1_micro", str(target), pending)   # the second click
    assert str(status.children) == f"Saved {target}." and pending is None
    assert C.load(target) == C.load_preset("tier1_micro")
    shipped = PRESET_DIR / "tier1_micro.yaml"
    before = shipped.read_bytes()
    for pending in (None, str(shipped)):
        status, _ = save_action(good, "tier1_micro", str(shipped), pending)
        assert "is a preset shipped with u-moec-tiny" in str(status.children)
    assert shipped.read_bytes() == before


def test_fill_restores_loads_resets_and_syncs_the_checklist(tmp_path):
    stored = {"values": {"model.d_model": 192, "lora.enabled": True, "junk": 1}, "tier": "tier2_small"}
    out = cc.fill(None, None, [], {}, None, None, stored)
    assert out["values"]["model.d_model"] == 192 and "junk" not in out["values"]
    assert out["tier"] == "tier2_small" and "lora.enabled" in out["checklist"]
    assert set(out["values"]) == {"model.d_model", "lora.enabled"}  # what differs from the page
    out = cc.fill(None, None, [], {}, None, None, None)  # first visit: the page holds the defaults
    assert out["values"] == {} and out["tier"] == form.TIER_INFO.default   # the tier: checked

    out = cc.fill(common.CONFIG_TIER, "tier3_base", [], {}, None, None, None)
    assert out["values"] == form.preset_values("tier3_base")
    out = cc.fill(ids.CONFIG_RESET_BTN, "custom", [], {}, None, None, None)
    assert out["tier"] == "tier1_micro" and "not a preset" in str(out["message"])

    switches = {k: False for k in form.COMPONENTS}
    out = cc.fill(ids.CONFIG_COMPONENTS, None, ["cascade.enabled"], switches, None, None, None)
    assert out["values"] == {"cascade.enabled": True}
    switches["lora.enabled"] = True
    out = cc.fill(form.BY_KEY["lora.enabled"].component_id, None, [], switches, None, None, None)
    assert out["checklist"] == ["lora.enabled"]

    out = cc.fill(ids.CONFIG_LOAD_BTN, None, [], {}, None, str(tmp_path / "none.yaml"), None)
    assert "no such file" in str(out["message"]) and "values" not in out
    out = cc.fill(common.CONFIG_INJECT, None, [], {}, {"values": {"moe.top_k": 4, "x.y": 1},
                                                    "source": "Growth"}, None, None)
    assert out["values"] == {"moe.top_k": 4} and "from Growth" in str(out["message"])


def test_derived_quantities_use_the_model_sizing():
    cfg = C.load_preset("tier1_micro")
    q = {x.label: x for x in derived.quantities(cfg)}
    assert q["bytes / step"].value == f"{cfg.training.batch_size * cfg.training.seq_len:,}"
    assert q["training bytes"].note == f"{cfg.training.steps:,} steps"
    assert q["parameters"].value == fmt_count(sizing.total_params(cfg))
    multi = C.build(C.apply_overrides(C.to_dict(cfg), ["hardware.gpus=4"]))
    q = {x.label: x for x in derived.quantities(multi)}
    assert "x 4 GPUs" in q["bytes / step"].note


def test_training_memory_says_whether_it_fits_this_machine():
    cfg = C.load_preset("tier1_micro")
    q = {x.label: x for x in derived.quantities(cfg)}
    if q["training memory"].value != "n/a":
        assert "this machine" in q["training memory"].note
    gib = 1 << 30
    assert "fits this machine" in derived.memory_verdict(2 * gib, cfg, ram=16 * gib)
    assert "tight" in derived.memory_verdict(14 * gib, cfg, ram=16 * gib)
    assert "does NOT fit" in derived.memory_verdict(40 * gib, cfg, ram=16 * gib)
    gpu = C.build(C.apply_overrides(C.to_dict(cfg), ["hardware.gpus=1"]))
    assert "not checked" in derived.memory_verdict(40 * gib, gpu, ram=16 * gib)


def test_derived_quantities_stay_while_a_field_is_in_error():
    values = dict(form.default_values(), **{"moe.top_k": 9})
    out = cc.check(values, "tier1_micro")
    text = str(out["derived"])
    assert out["start_disabled"] is True
    assert "With the preset's values for moe.top_k" in text and "training bytes" in text
