"""Training checkpoint -> coding model file (the only part of coding that needs torch).

The model's name defaults to "<run>-step<N>"; its info records where it came from, the run's
corpus (dataset.json) and the validation bpb the run measured at or before that step.
Exporting is deterministic: the same checkpoint gives the same integers and hash anywhere.
"""
from __future__ import annotations

import csv
import json
import re
import time
from pathlib import Path

from .. import config as C
from ..units import nats_to_bits
from .modelfile import ModelFile, ModelFileError, make
from .quantize import QuantizeError, export_tensors


def default_name(checkpoint: Path, step: int) -> str:
    run = checkpoint.resolve().parent.parent.name if checkpoint.parent.name == "checkpoints" \
        else checkpoint.stem
    base = re.sub(r"[^A-Za-z0-9._-]+", "-", run).strip("-._") or "model"
    return f"{base[:48]}-step{step}"


def _corpus(cfg, run_root: Path | None) -> dict:
    path = Path(cfg.data.path)
    for cand in ([path] if path.is_absolute() else [Path.cwd() / path] +
                 ([run_root.parent.parent / path] if run_root else [])):
        try:
            rec = json.loads((cand / "dataset.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        splits = rec.get("splits", {})
        return {"dataset": cand.name, "kind": rec.get("kind", ""),
                "sources": rec.get("sources", []),
                "train_bytes": splits.get("train", {}).get("bytes"),
                "val_bytes": splits.get("val", {}).get("bytes")}
    return {"dataset": path.name, "kind": "unknown (dataset.json not found at export)"}


def _val_bpb(run_root: Path | None, step: int) -> dict | None:
    if run_root is None:
        return None
    best = None
    try:
        with open(run_root / "log.csv", newline="", encoding="utf-8") as fh:
            for row in csv.DictReader(fh):
                try:
                    s, v = int(row["step"]), float(row["val_loss"])
                except (KeyError, TypeError, ValueError):
                    continue
                if v >= 0 and s <= step:
                    best = {"step": s, "val_bpb": round(nats_to_bits(v), 4)}
    except OSError:
        return None
    return best


def export_checkpoint(checkpoint: Path, name: str | None = None,
                      description: str = "") -> ModelFile:
    """The coding model of a training checkpoint (torch is imported here, lazily)."""
    from ..train import checkpoint as ck
    checkpoint = Path(checkpoint)
    try:
        state = ck.load(checkpoint)
    except ck.CheckpointError as exc:
        raise ModelFileError(str(exc)) from None
    cfg = ck.checkpoint_config(state, str(checkpoint))
    step = int(state.get("step", 0))
    sd = {k: v.detach().cpu().float().numpy() for k, v in state["model"].items()
          if "lora_" not in k}
    try:
        tensors = export_tensors(sd, cfg)
    except QuantizeError as exc:
        raise ModelFileError(f"checkpoint {checkpoint}: {exc}") from None
    run_root = checkpoint.resolve().parent.parent if checkpoint.parent.name == "checkpoints" \
        else None
    info = {"created": time.strftime("%Y-%m-%d %H:%M:%S"),
            "description": description,
            "source": {"checkpoint": checkpoint.name, "run": run_root.name if run_root else "",
                       "step": step, "bytes_seen": int(state.get("bytes_seen", 0)),
                       "train_seconds": round(float(state.get("elapsed_s", 0.0)), 1),
                       "torch": str(state.get("torch_version", ""))},
            "corpus": _corpus(cfg, run_root), "params": int(sum(v.size for v in sd.values()))}
    bpb = _val_bpb(run_root, step)
    if bpb:
        info["bpb"] = bpb
    config = C.to_dict(cfg)
    config["lora"] = {**config["lora"], "enabled": False}  # adapters are training-only
    return make(name or default_name(checkpoint, step), config, tensors, info)
