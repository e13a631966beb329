"""Compress and decompress files with a trained checkpoint (the API the CLIs, the cockpit and the
evaluation call; no subprocess needed).

The .umc header records everything the decoder needs besides the weights: the profile, the
effective config (network + entropy + adaptation settings), the input's global vector, the
checkpoint's path and step, the thread count and the torch version.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

import torch

from .. import config as C
from ..codec import CodecSettings, CodecStats, compress, decompress, read_header
from ..codec.codec import config_hash
from ..codec.errors import CodecError, FingerprintMismatch, FormatError
from ..run.atomic import atomic_write_bytes
from ..train.checkpoint import CheckpointError
from . import profiles
from .runtime import keep_pages, paused_gc
from .threads import plan
from .neural import (ModelLoadError, build_predictor, decode_globals, encode_globals, globals_for,
                     load_model)

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class Result:
    stats: CodecStats
    profile: str
    streams: int
    checkpoint_step: int
    threads: int


def _read(path: Path, what: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise CodecError(f"cannot read {what} {path}: {exc.strerror or exc}") from None


def _load(checkpoint: Path, profile, config: Optional[C.Config]):
    try:
        return load_model(Path(checkpoint), profile, config)
    except (CheckpointError, ModelLoadError) as exc:
        raise CodecError(str(exc)) from None


def compress_path(input_path: Path, output_path: Path, checkpoint: Path, *,
                  config: Optional[C.Config] = None, profile: str = "turbo",
                  threads: Optional[int] = None, progress: Optional[Progress] = None) -> Result:
    """Compress a file into a .umc file (written atomically).

    threads: torch threads (recorded; the decoder runs the same count); default: the profile's
    count when that many cores are idle, else 1 (threads.py)."""
    prof = profiles.get(profile)
    data = _read(input_path, "input file")
    loaded = _load(checkpoint, prof, config)
    threads = threads or plan(prof.threads).threads
    keep_pages()
    g = globals_for(data, loaded.cfg)
    full = C.to_dict(loaded.cfg)  # the rest of the config is the checkpoint's + the profile's
    meta = {"globals": encode_globals(g), "entropy": full["entropy"], "lora": full["lora"],
            "checkpoint": str(Path(checkpoint).resolve()), "checkpoint_step": loaded.step,
            "input_name": Path(input_path).name[:200]}
    settings = CodecSettings.from_config(loaded.cfg, streams=prof.streams, threads=threads,
                                         profile=prof.name, metadata=meta)
    previous_threads = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        predictor = build_predictor(loaded, g, threads)
        t0 = time.perf_counter()
        with paused_gc():
            blob = compress(data, predictor, settings, progress=progress)
    finally:
        torch.set_num_threads(previous_threads)
    atomic_write_bytes(output_path, blob)
    stats = CodecStats(len(data), len(blob), time.perf_counter() - t0)
    return Result(stats, prof.name, prof.streams, loaded.step, threads)


def decompress_path(input_path: Path, output_path: Path, checkpoint: Optional[Path] = None, *,
                    progress: Optional[Progress] = None) -> Result:
    """Decode a .umc file; verifies sha256; writes the output atomically or not at all."""
    blob = _read(input_path, ".umc file")
    header = read_header(blob)
    meta = header.metadata
    try:
        prof = profiles.get(header.profile)
        settings = {"entropy": meta["entropy"], "lora": meta["lora"]}
        if not all(isinstance(v, dict) for v in settings.values()):
            raise TypeError("entropy/lora settings are not mappings")
        checkpoint = Path(checkpoint or meta["checkpoint"])
    except (KeyError, TypeError, ValueError) as exc:
        raise FormatError(f"{input_path} was not written by bin.compress (header metadata: "
                          f"{exc})") from None
    except Exception as exc:  # profiles.get raises UserError for unknown names
        raise FormatError(f"{input_path}: {exc}") from None
    if not checkpoint.is_file():
        raise CodecError(f"{input_path} was compressed with checkpoint {checkpoint} (step "
                         f"{meta.get('checkpoint_step')}), which is not here; pass --checkpoint")
    loaded = _load(checkpoint, prof, settings)
    if config_hash(loaded.cfg) != header.config_hash:
        raise FingerprintMismatch(f"{input_path}: the checkpoint's config differs from the one the "
                                  "file was written with")
    try:
        g = decode_globals(meta["globals"], loaded.cfg.head.d_globals)
    except (KeyError, ValueError, TypeError, AttributeError) as exc:
        raise FormatError(f"{input_path}: bad global vector in the header ({exc})") from None
    keep_pages()
    previous_threads = torch.get_num_threads()
    torch.set_num_threads(header.threads)  # the encoder's count: same numerics
    try:
        predictor = build_predictor(loaded, g, header.threads)
        t0 = time.perf_counter()
        with paused_gc():
            data = decompress(blob, predictor, progress=progress, threads=torch.get_num_threads(),
                              torch_version=str(torch.__version__))
    finally:
        torch.set_num_threads(previous_threads)
    atomic_write_bytes(output_path, data)
    return Result(CodecStats(len(data), len(blob), time.perf_counter() - t0), prof.name,
                  header.streams, loaded.step, header.threads)
