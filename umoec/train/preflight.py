"""What the trainer refuses before its first step, checked without starting it (no torch): the
cockpit refuses the same configs at Start, and shows why while the form is edited, instead of a
run that crashes seconds later."""
from __future__ import annotations

from pathlib import Path

from .. import config as C

FP8_REFUSAL = ("training.precision=bf16+fp8 is not implemented by this trainer (it needs FP8 "
               "matmul kernels on GPUs of compute capability >= 8.9); use bf16")


def dataset_folder(cfg: C.Config, root: Path | None = None) -> Path:
    """data.path as the trainer will open it (relative paths from its working folder `root`)."""
    path = Path(cfg.data.path).expanduser()
    return path if path.is_absolute() or root is None else Path(root) / path


def missing_dataset(cfg: C.Config, root: Path | None = None) -> str | None:
    folder = dataset_folder(cfg, root)
    if (folder / "dataset.json").is_file():
        return None
    return (f"no dataset at {folder} (dataset.json missing); build one with "
            f"`python -m bin.prepare_data --out {cfg.data.path}`")


def refusals(cfg: C.Config, root: Path | None = None) -> dict[str, str]:
    """config key -> why the trainer would stop before training with this config."""
    out = {}
    if cfg.training.precision == "bf16+fp8":
        out["training.precision"] = FP8_REFUSAL
    missing = missing_dataset(cfg, root)
    if missing:
        out["data.path"] = missing
    return out
