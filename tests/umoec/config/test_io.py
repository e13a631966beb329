"""YAML load/save, dotted overrides and the errors bad files give."""
import pytest

from umoec import config as C


def test_round_trip_through_yaml_keeps_every_value(tmp_path):
    cfg = C.load_preset("tier3_base")
    path = C.save(cfg, tmp_path / "out.yaml", "my header")
    assert C.load(path) == cfg
    assert C.leading_comment(path.read_text()) == "# my header"


def test_every_key_line_has_a_comment_above_it():
    lines = C.dumps(C.Config()).splitlines()
    for i, line in enumerate(lines):
        if line.strip() and not line.strip().startswith("#") and not line.rstrip().endswith(":"):
            assert lines[i - 1].strip().startswith("# "), line


def test_overrides_apply_dotted_keys_with_field_types(tmp_path):
    cfg = C.load_preset("tier1_micro", ["moe.top_k=1", "optimizer.adamw.betas=0.9,0.99",
                                        "early_exit.blocks=[2]", "model.block_pattern=SD",
                                        "training.precision=bf16", "mod.enabled=false",
                                        "data.path=data/other dir", "model.n_blocks=5"])
    assert cfg.moe.top_k == 1 and cfg.optimizer.adamw.betas == (0.9, 0.99)
    assert cfg.early_exit.blocks == [2] and cfg.model.block_pattern == "SD"
    assert cfg.mod.enabled is False and cfg.data.path == "data/other dir"


def test_override_errors_name_the_override():
    with pytest.raises(C.ConfigError, match=r"--set moe.top_k=9: moe.top_k=9 must be <= "):
        C.load_preset("tier1_micro", ["moe.top_k=9"])
    with pytest.raises(C.ConfigError, match=r"unknown key moe.topk \(did you mean moe.top_k\?\)"):
        C.load_preset("tier1_micro", ["moe.topk=2"])
    with pytest.raises(C.ConfigError, match=r"must look like section.key=value"):
        C.load_preset("tier1_micro", ["moe.top_k"])


@pytest.mark.parametrize("text, expected", [
    ("model: [unclosed\n", "not valid YAML at line 2"),
    ("", "the file is empty"),
    ("model:\n  d_model: !!python/object/apply:os.system ['true']\n", "not valid YAML"),
])
def test_bad_yaml_files(tmp_path, text, expected):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(C.ConfigError) as info:
        C.load(path)
    assert str(path) in str(info.value) and expected in str(info.value)


def test_missing_and_odd_files(tmp_path):
    with pytest.raises(C.ConfigError, match="no such file"):
        C.load(tmp_path / "nope.yaml")
    with pytest.raises(C.ConfigError, match="is a folder"):
        C.load(tmp_path)
    binary = tmp_path / "bin.yaml"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(C.ConfigError, match="not UTF-8"):
        C.load(binary)


def test_partial_config_keeps_defaults(tmp_path):
    path = tmp_path / "small.yaml"
    path.write_text("moe:\n  top_k: 1\n")
    cfg = C.load(path)
    assert cfg.moe.top_k == 1 and cfg.model == C.Config().model


def test_save_is_atomic_and_leaves_no_temp_files(tmp_path):
    C.save(C.Config(), tmp_path / "a.yaml")
    assert [p.name for p in tmp_path.iterdir()] == ["a.yaml"]
