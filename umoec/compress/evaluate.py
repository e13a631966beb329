"""Evaluate a checkpoint as a compressor: compress, decompress, compare sha256, measure bpb, and
run the classical baselines on the very same bytes; record it all in the run's metrics.db.

Data: enwik8 when the user has it (--data FILE, $ENWIK8, or data/enwik8); otherwise the
validation split of the run's dataset (data.path), and the report says which.
"""
from __future__ import annotations

import hashlib
import os
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from .. import units
from ..codec.baselines import (
    BaselineResult,
    PeerFailed,
    available,
    run_baselines,
    run_primed,
    skipped_peers,
)
from ..codec.errors import CodecError
from ..config import load as load_config
from ..data.dataset import bin_path
from ..metrics import TrainingDB
from ..run import RunDir
from .api import compress_path, decompress_path, export_for

PRIME_BYTES = 1_000_000      # default prime of the primed baselines (bin.evaluate --prime-bytes)
PRIMED = ("xz -9e", "PPMd -o16", "zpaq -m5")   # the primed columns, each when installed
ENWIK8_HINT = ("enwik8 not found (looked at --data, $ENWIK8 and data/enwik8); get it from "
               "https://mattmahoney.net/dc/enwik8.zip, unzip it to data/enwik8 or pass --data. ")


@dataclass
class EvalReport:
    dataset: str
    source: str
    step: int
    original_bytes: int
    compressed_bytes: int
    bpb: float
    roundtrip_ok: bool
    compress_s: float
    decompress_s: float
    baselines: list[BaselineResult] = field(default_factory=list)
    note: str = ""
    roundtrip_error: str = ""          # why the round trip failed, when it did
    prime: str = ""                    # what the primed baselines were primed with
    skipped: dict = field(default_factory=dict)   # peer -> why it did not run (or failed)


def training_prime(run: RunDir, root: Path, n_bytes: int) -> tuple[bytes, str]:
    """The last `n_bytes` of the run's training split (what its checkpoints learned from), and a
    label; (b"", why) when there is none."""
    try:
        cfg = load_config(run.config_path)
    except Exception as exc:  # a run without a readable config: no prime, said so
        return b"", f"no prime: {exc}"
    train = Path(cfg.data.path)
    train = bin_path(train if train.is_absolute() else root / train, "train")
    try:
        with open(train, "rb") as fh:
            size = fh.seek(0, 2)
            fh.seek(max(0, size - n_bytes))
            return fh.read(), f"the last {min(size, n_bytes):,} bytes of {train}"
    except OSError as exc:
        return b"", f"no prime: cannot read {train} ({exc.strerror or exc})"


@dataclass(frozen=True)
class DataChoice:
    """Which bytes an evaluation reads (locate_data), or why there are none."""

    path: Path | None           # the file to evaluate on; None when there is none
    label: str                     # the dataset name eval_results records ("enwik8", "small-val")
    note: str                      # what the report says about the choice; why, when path is None
    source: str                    # "data" (given), "enwik8", "val" (the run's split) or "none"
    val_path: Path | None = None   # the run's validation split, when it was looked for


def locate_data(run: RunDir, root: Path, data: Path | None = None) -> DataChoice:
    """Where an evaluation's bytes come from: `data` when given; else enwik8 ($ENWIK8, then
    ROOT/data/enwik8); else the validation split of the run's dataset (data.path, relative to
    `root`). The run's config is read only when there is no enwik8 (ConfigError when it cannot
    be)."""
    if data is not None:
        if not data.is_file():
            return DataChoice(None, data.name, f"--data {data} does not exist", "none")
        return DataChoice(data, "enwik8" if data.name.startswith("enwik8") else data.name, "", "data")
    for cand in (os.environ.get("ENWIK8"), root / "data" / "enwik8"):
        if cand and Path(cand).is_file():
            return DataChoice(Path(cand), "enwik8", "", "enwik8")
    cfg = load_config(run.config_path)
    folder = Path(cfg.data.path)
    folder = folder if folder.is_absolute() else root / folder
    val = bin_path(folder, "val")
    if not val.is_file():
        return DataChoice(None, f"{folder.name}-val",
                          ENWIK8_HINT + f"The run's dataset {folder} has no val.bin either; build "
                          f"it with python -m bin.prepare_data --out {cfg.data.path}", "none", val)
    return DataChoice(val, f"{folder.name}-val",
                      ENWIK8_HINT + "Evaluating the run's validation split.", "val", val)


def find_data(data: Path | None, run: RunDir, root: Path) -> tuple[Path, str, str]:
    """(file, dataset label, note) of locate_data; CodecError when there is no such file."""
    choice = locate_data(run, root, data)
    if choice.path is None:
        raise CodecError(choice.note)
    return choice.path, choice.label, choice.note


def evaluate(run: RunDir, checkpoint: Path | None, data_path: Path, dataset: str, *,
             profile: str, max_bytes: int,
             progress: Callable[[str, int, int], None] | None = None, note: str = "",
             model=None, tag: str = "", prime: bytes = b"", prime_label: str = "") -> EvalReport:
    """Evaluate a run's checkpoint (exported to its coding model first), or `model` (a coding
    model as it is: the shipped default, another run's). Rows are recorded under the model's
    training step and `dataset` + `tag` (a tag keeps another model's rows apart from the run's).
    Every baseline installed here runs on the same bytes; with `prime` (the checkpoint's own
    training data, training_prime) also the PRIMED ones, primed with it."""
    raw = data_path.read_bytes()
    if max_bytes and len(raw) > max_bytes:
        raw = raw[:max_bytes]
        dataset = f"{dataset}[:{max_bytes}]"
    dataset += tag
    tick = (lambda stage: (lambda d, t: progress(stage, d, t))) if progress else (lambda s: None)
    model = model if model is not None else export_for(checkpoint)
    step = int((model.info.get("source") or {}).get("step", 0) or 0)
    with tempfile.TemporaryDirectory(prefix="umoec-eval-") as tmp:
        src, packed, back = Path(tmp) / "input.bin", Path(tmp) / "input.umc", Path(tmp) / "out.bin"
        src.write_bytes(raw)
        t0 = time.perf_counter()
        compress_path(src, packed, model, profile=profile, progress=tick("compress"))
        t1 = time.perf_counter()
        error = ""
        try:
            decompress_path(packed, back, model, progress=tick("decompress"))
            ok = hashlib.sha256(back.read_bytes()).digest() == hashlib.sha256(raw).digest()
            error = "" if ok else "decoded bytes differ from the original"
        except CodecError as exc:
            ok, error = False, str(exc)
        t2 = time.perf_counter()
        size = packed.stat().st_size
    failed: dict = {}
    baselines = run_baselines(raw, failed=failed)
    for name in PRIMED if prime else ():
        if name in available() and name not in failed:
            try:
                baselines.append(run_primed(name, prime, raw))
            except PeerFailed as exc:
                failed[f"{name} primed"] = str(exc)
    report = EvalReport(dataset, str(data_path), step, len(raw), size,
                        units.bpb(size, max(1, len(raw))), ok, t1 - t0, t2 - t1,
                        baselines, note, error, prime_label if prime else "",
                        {**skipped_peers(), **failed})
    with TrainingDB(run.db_path) as db:
        db.insert_eval_result(report.step, dataset, bpb=report.bpb, compressed_bytes=size,
                              original_bytes=len(raw), roundtrip_ok=ok)
        for b in report.baselines:
            db.insert_eval_baseline(report.step, dataset, b.name, compressed_bytes=b.packed_bytes,
                                    original_bytes=b.raw_bytes, seconds=b.compress_s)
        db.insert_event("eval", f"{dataset}: {report.bpb:.4f} bpb, roundtrip "
                        f"{'ok' if ok else 'FAILED'}", step=report.step)
    return report


def render(r: EvalReport) -> str:
    lines = [f"evaluation of checkpoint step {r.step} on {r.dataset} ({r.original_bytes:,} bytes "
             f"from {r.source})"]
    if r.note:
        lines.append(r.note)
    lines.append(f"{'method':18s} {'bytes':>12s} {'bpb':>7s} {'B/s (compress)':>15s}")
    lines.append(f"{'u-moec-tiny':18s} {r.compressed_bytes:12,d} {r.bpb:7.3f} "
                 f"{r.original_bytes / max(1e-9, r.compress_s):15,.0f}")
    for b in r.baselines:
        lines.append(f"{b.name:18s} {b.packed_bytes:12,d} {b.bpb:7.3f} "
                     f"{b.compress_bytes_per_s:15,.0f}")
    if r.prime:
        lines.append(f"primed = size(prime + data) - size(prime), prime: {r.prime}")
    if r.skipped:
        lines.append("left out: " + "; ".join(f"{k} ({v})" for k, v in r.skipped.items()))
    lines.append(f"roundtrip: {'PASS (sha256 equal)' if r.roundtrip_ok else 'FAIL: ' + r.roundtrip_error}")
    return "\n".join(lines)
