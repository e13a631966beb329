"""User presets (saved, listed beside the tiers, loaded into the form, deleted) and config
import/export as YAML and JSON."""
import base64
import json

import pytest
from dash import no_update

from gui import form
from gui import ids as common
from gui.app import create_app
from gui.pages.sidebar import ids
from gui.pages.sidebar.callbacks import fill
from gui.pages.sidebar.presets import import_action, preset_action
from gui.services import presets
from gui.services.presets import tier_options
from umoec import config as C


@pytest.fixture
def folder(tmp_path):
    return tmp_path / "presets"


def values_with(**changes):
    values = form.default_values()
    values.update(changes)
    return values


def test_save_list_load_and_delete(folder):
    name, existed = presets.save(values_with(**{"optimizer.adamw.lr": 0.002}), " my fast/lr ", folder)
    assert name == "my-fast-lr" and not existed
    path = folder / "my-fast-lr.yaml"
    cfg = C.load(path)                                         # a valid, commented config file
    assert cfg.tier == "my-fast-lr" and cfg.optimizer.adamw.lr == 0.002
    assert "User preset my-fast-lr" in path.read_text()
    assert presets.names(folder) == ["my-fast-lr"]
    assert presets.save(values_with(), "my-fast-lr", folder) == ("my-fast-lr", True)
    assert presets.delete("my-fast-lr", folder) == "my-fast-lr" and presets.names(folder) == []


@pytest.mark.parametrize("name, reason", [("", "type a preset name"), ("...", "type a preset name"),
                                          ("tier1_micro", "is a tier")])
def test_bad_names_are_refused(folder, name, reason):
    with pytest.raises(presets.PresetError, match=reason):
        presets.save(values_with(), name, folder)


def test_invalid_form_and_missing_folder_are_refused(folder):
    with pytest.raises(presets.PresetError, match="1 error"):
        presets.save(values_with(**{"moe.top_k": 99}), "x", folder)
    with pytest.raises(presets.PresetError, match="no presets folder"):
        presets.save(values_with(), "x", None)
    assert not folder.exists()


def test_paths_never_leave_the_presets_folder(folder, tmp_path):
    (tmp_path / "outside.yaml").write_text(C.dumps(C.Config()))
    folder.mkdir()
    assert presets.user_preset_path("../outside", folder) is None
    assert presets.user_preset_path("tier1_micro", folder) is None
    (folder / "tier1_micro.yaml").write_text(C.dumps(C.Config()))   # cannot shadow a tier
    assert presets.names(folder) == []
    with pytest.raises(presets.PresetError, match="not a saved preset"):
        presets.delete("tier1_micro", folder)


def test_editor_dropdown_and_form_load_saved_presets(tmp_path, folder):
    app = create_app(tmp_path / "runs", presets_dir=folder)
    presets.save(values_with(**{"moe.top_k": 4, "moe.n_routed": 8}), "wide", folder)
    with app.server.app_context():
        options = tier_options("wide")
        assert {"label": "wide (saved preset)", "value": "wide"} in options
        assert [o["value"] for o in options].count("wide") == 1
        out = fill(common.CONFIG_TIER, "wide", [], {}, None, None, None)
        assert out["values"]["moe.top_k"] == 4 and "Loaded the wide preset" in str(out["message"])
        reset = fill(ids.CONFIG_RESET_BTN, "wide", [], {}, None, None, None)
        assert reset["values"]["moe.top_k"] == 4
        saved = preset_action(ids.PRESET_SAVE_BTN, folder, "second", values_with(), "tier1_micro")
        assert saved["tier"] == "second" and "Saved preset second" in str(saved["message"])
        assert {"label": "second (saved preset)", "value": "second"} in saved["options"]
        unnamed = preset_action(ids.PRESET_DELETE_BTN, folder, "", values_with(), "second")
        assert "type the name" in str(unnamed["message"]) and presets.is_user_preset("second", folder)
        gone = preset_action(ids.PRESET_DELETE_BTN, folder, "second", values_with(), "second")
        assert "Deleted preset second" in str(gone["message"])
        assert "second" not in [o["value"] for o in gone["options"]]
    assert "wide" not in [o["value"] for o in tier_options(None)]   # outside a request: tiers only


def upload(text: str) -> str:
    return "data:application/octet-stream;base64," + base64.b64encode(text.encode()).decode()


def test_export_and_import_round_trip_yaml_and_json():
    values = values_with(**{"optimizer.adamw.lr": 1e-05, "moe.top_k": 1})
    name, text = presets.export_text(values, "tier1_micro", "yaml")
    assert name == "tier1_micro.yaml" and C.loads(text).optimizer.adamw.lr == 1e-05
    name, text = presets.export_text(values, "tier1_micro", "json")
    assert name == "tier1_micro.json" and json.loads(text)["moe"]["top_k"] == 1
    for fname, body in (("c.json", text), ("c.yaml", C.dumps(C.loads(json.dumps(json.loads(text)))))):
        out = import_action(upload(body), fname)
        got = out["inject"]["values"]
        assert float(got["optimizer.adamw.lr"]) == 1e-05 and got["moe.top_k"] == 1
        assert out["inject"]["tier"] == "tier1_micro" and "Imported" in str(out["message"])
    with pytest.raises(presets.PresetError, match="1 error"):
        presets.export_text(values_with(**{"moe.top_k": 99}), "tier1_micro", "json")


def test_import_reports_bad_files_and_marks_bad_values():
    assert "not valid JSON" in str(import_action(upload("{nope"), "c.json")["message"])
    assert "not a config" in str(import_action(upload("[1, 2]"), "c.json")["message"])
    assert "not UTF-8" in str(import_action("data:x;base64," + base64.b64encode(b"\xff\xfe").decode(),
                                            "c.yaml")["message"])
    assert import_action(None, "c.yaml")["inject"] is no_update
    out = import_action(upload("moe:\n  top_k: 99\nbogus: 1\n"), "c.yaml")
    assert out["inject"]["values"]["moe.top_k"] == 99             # kept as written: the form marks it
    assert "unknown key bogus ignored" in str(out["message"])
    filled = fill(common.CONFIG_INJECT, "tier1_micro", [], {}, out["inject"], None, None)
    assert filled["values"]["moe.top_k"] == 99 and filled["tier"] == "tier1_micro"
