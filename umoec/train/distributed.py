"""Where training runs: CPU, one GPU, or several processes under torchrun (DDP).

Under torchrun (WORLD_SIZE > 1) every process builds the same model and takes its rows of each
global batch; rank 0 alone writes metrics and checkpoints. On CPU the gloo backend is used (this
is how the tests exercise DDP); on GPUs, NCCL with one device per process. Several machines
(torchrun --nnodes): `hardware.gpus` counts the GPUs of one machine, and the processes of one
machine (LOCAL_WORLD_SIZE) share its cores and GPUs.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

import torch
import torch.distributed as dist

from ..config import Config


class LaunchError(RuntimeError):
    """The config asks for hardware this process does not have or was not launched for."""


@dataclass
class Dist:
    rank: int
    world: int
    device: torch.device
    local_world: int = 1        # processes on this machine (torchrun's LOCAL_WORLD_SIZE)

    @property
    def main(self) -> bool:
        return self.rank == 0

    @property
    def ddp(self) -> bool:
        return self.world > 1

    def all_mean(self, t: torch.Tensor) -> torch.Tensor:
        """Mean over ranks (identity without DDP)."""
        if self.ddp:
            t = t.clone()
            dist.all_reduce(t, op=dist.ReduceOp.SUM)
            t /= self.world
        return t

    def any(self, flag: bool) -> bool:
        """True if any rank says so (so all ranks stop at the same step)."""
        if not self.ddp:
            return flag
        t = torch.tensor([1.0 if flag else 0.0], device=self.device)
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        return bool(t.item() > 0)

    def all(self, flag: bool) -> bool:
        """True only if every rank says so."""
        return not self.any(not flag)

    def barrier(self) -> None:
        if self.ddp:
            dist.barrier()

    def close(self) -> None:
        if self.ddp and dist.is_initialized():
            dist.destroy_process_group()


def setup(cfg: Config) -> Dist:
    gpus = cfg.hardware.gpus
    world = int(os.environ.get("WORLD_SIZE", "1"))
    local_world = int(os.environ.get("LOCAL_WORLD_SIZE", str(world)))   # per machine
    if gpus >= 1 and not torch.cuda.is_available():
        raise LaunchError(f"hardware.gpus={gpus} but no CUDA GPU is visible "
                          "(torch.cuda.is_available() is False); set hardware.gpus=0 to train on CPU")
    if gpus > 1 and world == 1:
        raise LaunchError(f"hardware.gpus={gpus} needs one process per GPU: launch with "
                          f"`torchrun --nproc_per_node={gpus} -m bin.train ...`")
    if gpus >= 1 and world > 1 and local_world != gpus:
        raise LaunchError(f"torchrun started {local_world} processes on this machine but "
                          f"hardware.gpus={gpus} (GPUs per machine: --nproc_per_node={gpus})")
    if gpus and gpus > torch.cuda.device_count():
        raise LaunchError(f"hardware.gpus={gpus} but only {torch.cuda.device_count()} GPUs are visible")
    rank = int(os.environ.get("RANK", "0"))
    if world > 1:
        backend = "nccl" if gpus else "gloo"
        dist.init_process_group(backend=backend)
    if gpus:
        local = int(os.environ.get("LOCAL_RANK", "0"))
        torch.cuda.set_device(local)
        device = torch.device("cuda", local)
    else:
        device = torch.device("cpu")
    return Dist(rank, world, device, local_world)
