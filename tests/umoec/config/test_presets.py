"""Every preset loads, validates, round-trips, and keeps the canonical comments."""
import pytest

from umoec import config as C

PRESETS = C.preset_names()


def test_the_three_tiers_exist():
    assert {"tier1_micro", "tier2_small", "tier3_base"} <= set(PRESETS)


@pytest.mark.parametrize("name", PRESETS)
def test_preset_round_trips(name, tmp_path):
    cfg = C.load_preset(name)
    assert cfg.tier == name
    again = C.load(C.save(cfg, tmp_path / f"{name}.yaml"))
    assert again == cfg


@pytest.mark.parametrize("name", PRESETS)
def test_preset_text_is_canonical(name, root):
    """Comments come from the schema: run `make presets` after editing the schema or a preset."""
    text = (root / "configs" / f"{name}.yaml").read_text()
    assert text == C.dumps(C.load_preset(name), C.leading_comment(text))


def test_tiers_grow():
    sizes = [C.load_preset(n).model.d_model * C.load_preset(n).model.n_blocks
             for n in ("tier1_micro", "tier2_small", "tier3_base")]
    assert sizes == sorted(sizes) and len(set(sizes)) == 3
    assert C.load_preset("tier1_micro").hardware.gpus == 0
    assert C.load_preset("tier3_base").hardware.gpus >= 1
