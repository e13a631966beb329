"""Where training runs (umoec/train/distributed.py): the launch checks for GPUs on one or several
machines (torchrun --nnodes), with torch's CUDA and process group replaced by stand-ins (no GPU
here); the real multi-process paths run in test_trainer.py."""
import pytest
import torch

from umoec.config import load_preset
from umoec.train import distributed as D


@pytest.fixture
def gpus4(monkeypatch):
    """A machine with 4 visible GPUs; records the process group and device set."""
    calls = {}
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 4)
    monkeypatch.setattr(torch.cuda, "set_device", lambda i: calls.setdefault("device", i))
    monkeypatch.setattr(D.dist, "init_process_group",
                        lambda backend: calls.setdefault("backend", backend))
    for var in ("WORLD_SIZE", "LOCAL_WORLD_SIZE", "RANK", "LOCAL_RANK"):
        monkeypatch.delenv(var, raising=False)
    return calls


def _env(monkeypatch, **values):
    for k, v in values.items():
        monkeypatch.setenv(k, str(v))


def test_two_machines_of_four_gpus_each(gpus4, monkeypatch):
    """Rank 5 of 8 is the second process of the second machine: its own GPU 1, NCCL."""
    _env(monkeypatch, WORLD_SIZE=8, LOCAL_WORLD_SIZE=4, RANK=5, LOCAL_RANK=1)
    d = D.setup(load_preset("tier1_micro", ["hardware.gpus=4"]))
    assert (d.rank, d.world, d.local_world, d.main, d.ddp) == (5, 8, 4, False, True)
    assert d.device == torch.device("cuda", 1) and gpus4 == {"backend": "nccl", "device": 1}


def test_processes_per_machine_must_match_the_gpus_of_one_machine(gpus4, monkeypatch):
    _env(monkeypatch, WORLD_SIZE=8, LOCAL_WORLD_SIZE=8, RANK=0, LOCAL_RANK=0)
    with pytest.raises(D.LaunchError, match="started 8 processes on this machine but "
                       r"hardware.gpus=4 \(GPUs per machine: --nproc_per_node=4\)"):
        D.setup(load_preset("tier1_micro", ["hardware.gpus=4"]))


def test_several_gpus_need_torchrun_and_must_exist(gpus4, monkeypatch):
    with pytest.raises(D.LaunchError, match="torchrun --nproc_per_node=2"):
        D.setup(load_preset("tier1_micro", ["hardware.gpus=2"]))
    _env(monkeypatch, WORLD_SIZE=8, LOCAL_WORLD_SIZE=8)
    with pytest.raises(D.LaunchError, match="only 4 GPUs are visible"):
        D.setup(load_preset("tier1_micro", ["hardware.gpus=8"]))
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(D.LaunchError, match="no CUDA GPU is visible"):
        D.setup(load_preset("tier1_micro", ["hardware.gpus=1"]))


def test_cpu_processes_of_two_machines_use_gloo(gpus4, monkeypatch):
    _env(monkeypatch, WORLD_SIZE=4, LOCAL_WORLD_SIZE=2, RANK=3, LOCAL_RANK=1)
    d = D.setup(load_preset("tier1_micro", ["hardware.gpus=0"]))
    assert (d.rank, d.world, d.local_world) == (3, 4, 2) and d.device == torch.device("cpu")
    assert gpus4 == {"backend": "gloo"}
