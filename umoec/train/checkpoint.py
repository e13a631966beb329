"""Checkpoints: named state_dict parts, written atomically, read with weights_only=True.

A checkpoint holds everything an exact resume needs: model (MoE balancing biases are buffers in
it), optimizers, step, bytes seen, elapsed time, torch RNG state and the config it was trained
with. The data position is the step itself (batches are a pure function of (seed, step)).
"""
from __future__ import annotations

import pickle
import zipfile
from pathlib import Path
from typing import Any

import torch

from .. import config as C
from ..run.atomic import atomic_write
from .formats import FORMAT, SIM_FORMAT

# Sections that shape the network: a checkpoint only loads into a model built from equal ones.
ARCH_SECTIONS = ("model", "moe", "mod", "early_exit", "cascade", "conditioning", "patches", "head",
                 "lora")


class CheckpointError(RuntimeError):
    """A checkpoint that cannot be used; the message names the file and the reason."""


def save(path: Path, *, model_state: dict, optimizer_states: list[dict], step: int,
         bytes_seen: int, elapsed_s: float, cfg: C.Config, world_size: int = 1,
         pending_eval: int | None = None) -> Path:
    """pending_eval: the step whose evaluation a stop request cut short (a resume redoes it)."""
    obj = {"format": FORMAT, "step": step, "bytes_seen": bytes_seen, "elapsed_s": elapsed_s,
           "config_yaml": C.dumps(cfg), "model": model_state, "optimizers": optimizer_states,
           "torch_rng": torch.get_rng_state(), "torch_version": str(torch.__version__),
           "world_size": world_size, "pending_eval": pending_eval}
    return atomic_write(path, lambda fh: torch.save(obj, fh))


def load(path: str | Path) -> dict[str, Any]:
    """The checkpoint dict, or CheckpointError with an actionable message."""
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"checkpoint {path} does not exist")
    with open(path, "rb") as fh:
        if fh.read(4) != b"PK\x03\x04":  # torch.save writes a zip archive
            raise CheckpointError(f"checkpoint {path} is damaged or not a checkpoint (no zip "
                                  "header)")
    try:
        obj = torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as exc:
        why = next((ln.strip() for ln in str(exc).splitlines() if "Unsupported global" in ln),
                   str(exc).splitlines()[0])
        raise CheckpointError(f"checkpoint {path} holds objects other than tensors and plain "
                              f"data, refused for safety (weights_only): {why[:200]}") from None
    except (RuntimeError, EOFError, zipfile.BadZipFile, OSError, ValueError) as exc:
        raise CheckpointError(f"checkpoint {path} is damaged or truncated "
                              f"({type(exc).__name__}: {str(exc).splitlines()[0][:200]})") from None
    if isinstance(obj, dict) and obj.get("format") == SIM_FORMAT:
        raise CheckpointError(f"{path} is a simulated checkpoint (no weights); train a real run "
                              f"with bin.train")
    if not isinstance(obj, dict) or obj.get("format") != FORMAT:
        raise CheckpointError(f"{path} is not a u-moec-tiny checkpoint")
    return obj


def checkpoint_config(ck: dict, source: str) -> C.Config:
    return C.loads(ck["config_yaml"], f"{source} (embedded config)")


def arch_differences(a: C.Config, b: C.Config) -> list[str]:
    """Human-readable 'key: a != b' lines for the network-shaping fields that differ."""
    out = []
    for f in C.all_fields():
        if f.section.split(".")[0] in ARCH_SECTIONS:
            va, vb = C.get_value(a, f.key), C.get_value(b, f.key)
            if va != vb:
                out.append(f"{f.key}: {vb} (checkpoint) != {va} (config)")
    return out
