"""Checkpoints load only plain tensors and data, and every bad file gets a clear reason."""
import os

import pytest
import torch

from umoec import config as C
from umoec.sim.simulator import save_checkpoint as save_sim
from umoec.train import checkpoint as ckpt


def saved(tmp_path):
    return ckpt.save(tmp_path / "step000003.pt", model_state={"w": torch.ones(2)},
                     optimizer_states=[{"state": {}, "param_groups": []}], step=3,
                     bytes_seen=99, elapsed_s=1.5, cfg=C.Config())


def test_round_trip(tmp_path):
    ck = ckpt.load(saved(tmp_path))
    assert ck["step"] == 3 and torch.equal(ck["model"]["w"], torch.ones(2))
    assert ckpt.checkpoint_config(ck, "x") == C.Config()
    assert ckpt.arch_differences(C.Config(), C.Config()) == []
    other = C.load_preset("tier1_micro", ["model.d_model=64", "training.steps=3000"])
    assert ckpt.arch_differences(other, C.Config()) == \
        ["model.d_model: 96 (checkpoint) != 64 (config)"]


def test_missing_truncated_and_foreign_files(tmp_path):
    with pytest.raises(ckpt.CheckpointError, match="does not exist"):
        ckpt.load(tmp_path / "nope.pt")
    path = saved(tmp_path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(ckpt.CheckpointError, match="damaged or truncated"):
        ckpt.load(path)
    torch.save({"weights": torch.zeros(1)}, tmp_path / "other.pt")
    with pytest.raises(ckpt.CheckpointError, match="not a u-moec-tiny checkpoint"):
        ckpt.load(tmp_path / "other.pt")


def test_pickled_callable_is_refused(tmp_path):
    path = tmp_path / "evil.pt"
    torch.save({"format": ckpt.FORMAT, "payload": os.system}, path)
    with pytest.raises(ckpt.CheckpointError, match="refused for safety"):
        ckpt.load(path)


def test_simulated_checkpoint_is_refused_with_a_hint(tmp_path):
    save_sim(tmp_path / "sim.pt", 5, 1.0, C.Config())
    with pytest.raises(ckpt.CheckpointError, match="simulated checkpoint"):
        ckpt.load(tmp_path / "sim.pt")
