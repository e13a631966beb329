"""System metrics of a training process, sampled at each logged step (W&B's "system" panel):
CPU use, resident memory, the free space where the run writes, and GPU use when there is one.

- `cpu_percent`: the process's CPU time since the previous sample over the wall time, in % of
  one core (400 = four busy cores), from psutil;
- `rss_bytes`: resident memory now;
- `disk_free_bytes`: free space on the run folder's filesystem (a run that fills the disk
  shows it coming);
- `gpu_util`, `gpu_mem_bytes`: from the `gpu` probe the trainer passes on CUDA (utilisation in
  % when the driver reports it, memory allocated by torch); None on CPU.
A value that cannot be read is None (a NULL in metrics.db), never a made-up 0.
"""
from __future__ import annotations

import os
import shutil
from collections.abc import Callable

import psutil

GpuProbe = Callable[[], tuple[float | None, int | None]]


class SystemSampler:
    def __init__(self, folder: str | os.PathLike, gpu: GpuProbe | None = None):
        self.folder, self.gpu = folder, gpu
        self.proc = psutil.Process()
        self.proc.cpu_percent(None)  # the first call only starts the interval

    def sample(self) -> dict[str, float | None]:
        out: dict[str, float | None] = {"cpu_percent": None, "rss_bytes": None,
                                           "disk_free_bytes": None, "gpu_util": None,
                                           "gpu_mem_bytes": None}
        try:
            out["cpu_percent"] = float(self.proc.cpu_percent(None))
            out["rss_bytes"] = int(self.proc.memory_info().rss)
        except psutil.Error:
            pass
        try:
            out["disk_free_bytes"] = int(shutil.disk_usage(self.folder).free)
        except OSError:
            pass
        if self.gpu is not None:
            try:
                out["gpu_util"], out["gpu_mem_bytes"] = self.gpu()
            except Exception:  # a driver hiccup must not stop training
                pass
        return out


def torch_cuda_probe(device) -> GpuProbe:
    """Utilisation (needs the NVML bindings; None without them) and torch's allocated memory on
    `device`."""
    import torch

    def probe() -> tuple[float | None, int | None]:
        try:
            util: float | None = float(torch.cuda.utilization(device))
        except Exception:  # no pynvml, or a driver that does not say
            util = None
        return util, int(torch.cuda.memory_allocated(device))
    return probe
