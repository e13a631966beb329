"""Quantities derived from a config, shown live beside the editor (pure; file reads guarded).
Sizes come from `umoec.sizing` (torch-free; a test keeps them equal to the built model's)."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from umoec import sizing
from umoec.config import Config
from umoec.data.dataset import DatasetInfo, bin_path
from umoec.schedule import MIN_LR_RATIO
from umoec.units import fmt_bytes, fmt_count

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Quantity:
    label: str
    value: str
    note: str = ""


def _call(fn: Callable[[Config], float], cfg: Config) -> float | None:
    try:
        value = fn(cfg)
    except Exception:  # a sizing bug must not take the editor down; the panel says "n/a"
        return None
    return float(value) if isinstance(value, (int, float)) else None


def dataset_bytes(cfg: Config, root: Path = ROOT) -> int | None:
    """Training bytes of cfg.data.path (dataset.json, else train.bin's size), None if absent."""
    folder = Path(cfg.data.path)
    folder = folder if folder.is_absolute() else root / folder
    info = DatasetInfo.read(folder)
    if info.recorded:
        return info.train_bytes
    try:
        return bin_path(folder, "train").stat().st_size
    except OSError:
        return None


def memory_verdict(memory: float, cfg: Config, ram: int | None = None) -> str:
    """Whether the estimate fits: this machine's RAM for CPU training (every process on it);
    GPU memory is not probed by the cockpit, so it is not judged."""
    if cfg.hardware.gpus > 0:
        return "per GPU process, estimated; GPU memory is not checked by the cockpit"
    if ram is None:
        import psutil
        ram = psutil.virtual_memory().total
    if memory <= 0.75 * ram:
        return f"estimated: fits this machine ({fmt_bytes(ram)} RAM)"
    if memory <= ram:
        return f"estimated: tight on this machine ({fmt_bytes(ram)} RAM; other programs need some)"
    return f"estimated: does NOT fit this machine ({fmt_bytes(ram)} RAM)"


def quantities(cfg: Config, root: Path = ROOT) -> list[Quantity]:
    t, lg, hw = cfg.training, cfg.logging, cfg.hardware
    procs = max(1, hw.gpus)
    per_step = t.batch_size * t.seq_len * procs
    total = per_step * t.steps
    total_p, active, flops, memory = (_call(fn, cfg) for fn in (  # None where sizing fails
        sizing.total_params, sizing.active_params_per_byte, sizing.flops_per_byte,
        sizing.training_memory_bytes))
    out = [Quantity("parameters", fmt_count(total_p) if total_p else "n/a", "total, all experts"),
           Quantity("active params / byte", fmt_count(active) if active else "n/a",
                    f"top {cfg.moe.top_k} of {cfg.moe.n_routed} experts"),
           Quantity("training memory", fmt_bytes(memory) if memory else "n/a",
                    memory_verdict(memory, cfg) if memory else "per process, estimated")]
    if flops:
        out.append(Quantity("training compute", f"{fmt_count(flops * total)}FLOP",
                            f"{fmt_count(flops)}FLOP / byte"))
    gpus = f" x {procs} GPUs" if procs > 1 else ""
    out.append(Quantity("bytes / step", f"{per_step:,}",
                        f"{t.batch_size} x {t.seq_len} bytes{gpus}"))
    out.append(Quantity("training bytes", fmt_bytes(total), f"{t.steps:,} steps"))
    data = dataset_bytes(cfg, root)
    out.append(Quantity("epochs", f"{total / data:.3g}", f"over {fmt_bytes(data)} in {cfg.data.path}")
               if data else Quantity("epochs", "n/a", f"no dataset at {cfg.data.path} yet"))
    final = MIN_LR_RATIO if t.cosine_schedule else 1.0
    out.append(Quantity("lr AdamW / Muon", f"{cfg.optimizer.adamw.lr:g} / "
                        f"{cfg.optimizer.muon.lr:g}",
                        f"warmup {t.warmup_steps:,}, then "
                        + (f"cosine to {final:.0%}" if t.cosine_schedule else "constant")))
    out.append(Quantity("checkpoints", f"{-(-t.steps // lg.save_every):,}",
                        f"every {lg.save_every:,} steps"))
    out.append(Quantity("metric rows", f"{-(-t.steps // lg.log_every):,}",
                        f"every {lg.log_every:,}; {-(-t.steps // lg.eval_every):,} evals"))
    return out
