"""Compress and decompress with a coding model (the API the CLIs, the cockpit and the evaluation
call; no subprocess, no torch unless a training checkpoint has to be exported first).

A .umc file names its model by content hash (and name, for messages), the engine version and the
profile; its metadata holds the input's global vector and the match-model setting. Decoding finds
the model by that hash along the model search path (umoec/engine/store.py), so files decode on
any machine, with any thread count, wherever the model file is.
"""
from __future__ import annotations

import base64
import dataclasses
import io
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import numpy as np

from .. import config as C
from ..codec import CodecSettings, CodecStats, compress, decompress, read_header
from ..codec.cm import NoNetwork
from ..codec.errors import CodecError, FormatError
from ..data import document_features
from ..engine import modelfile as mf
from ..engine import primer, store
from ..engine.adapt import RATE_MAX
from ..engine.predictor import ExactPredictor
from ..errors import UserError
from ..predict.match import MatchMixer, MatchSettings
from ..run.atomic import atomic_write
from . import profiles
from .choose import choose, stage_contexts, x86_worth
from .runtime import keep_pages, paused_gc

Progress = Callable[[int, int], None]
ModelSpec = None | str | Path | mf.ModelFile
CM_BLOCK = 1 << 20          # block size of the model-free cm profile (one stream, one C call)
NO_MODEL = "none (the cm profile needs no model)"


@dataclass(frozen=True)
class Result:
    stats: CodecStats
    profile: str
    streams: int
    model: str               # name (hash prefix)
    model_hash: str


class ModelError(CodecError):
    """The model cannot be found or used; exit code 2, the message names it and where."""


def _open(path: Path, what: str) -> BinaryIO:
    try:
        if Path(path).is_dir():
            raise IsADirectoryError(21, "Is a directory")
        return open(path, "rb")
    except OSError as exc:
        raise CodecError(f"cannot read {what} {path}: {exc.strerror or exc}") from None


def _file_to_file(input_path: Path, what: str, output_path: Path, code):
    """code(src, dst, input size) from the input file into `output_path`, which appears only
    when complete (an unnamed file until then); returns what `code` returned."""
    done = []
    with _open(input_path, what) as src:
        size = os.fstat(src.fileno()).st_size
        atomic_write(output_path, lambda dst: done.append(code(src, dst, size)), unnamed=True)
    return done[0]


def export_for(checkpoint: Path) -> mf.ModelFile:
    """The coding model of a training checkpoint, written next to its run (RUN/models/stepN.umm,
    on the model search path) and reused while it is newer than the checkpoint."""
    from ..engine.export import export_checkpoint
    checkpoint = Path(checkpoint)
    if not checkpoint.is_file():
        raise ModelError(f"checkpoint {checkpoint} does not exist")
    target = None
    if checkpoint.parent.name == "checkpoints" and checkpoint.stem.startswith("step"):
        target = checkpoint.parent.parent / "models" / (checkpoint.stem + mf.SUFFIX)
        try:
            if target.stat().st_mtime >= checkpoint.stat().st_mtime:
                return mf.read(target)
        except (OSError, mf.ModelFileError):
            pass
    try:
        m = export_checkpoint(checkpoint)
    except mf.ModelFileError as exc:
        raise ModelError(str(exc)) from None
    if target is not None:
        try:
            target.parent.mkdir(exist_ok=True)
            mf.write(m, target)
        except OSError:
            pass  # a read-only run folder: the model is still usable for this call
    return m


def open_model(model: ModelSpec = None, checkpoint: Path | None = None) -> mf.ModelFile:
    """A ModelFile from what the user gave: a ModelFile, a name/hash/path, a checkpoint to export,
    or nothing (the shipped default model)."""
    if isinstance(model, mf.ModelFile):
        return model
    if checkpoint is not None:
        return export_for(Path(checkpoint))
    try:
        return store.load(store.resolve(None if model is None else str(model)))
    except (LookupError, mf.ModelFileError) as exc:
        raise ModelError(str(exc)) from None


def no_network(model: mf.ModelFile | None) -> NoNetwork:
    """The cm profile's predictor: the mixing stage alone, primed with the model's primer when
    it has one (the file then names that model), model-free otherwise."""
    if model is None:
        return NoNetwork()
    try:
        text = primer.text_of(model)
    except mf.ModelFileError as exc:
        raise ModelError(str(exc)) from None
    return NoNetwork(text, model.hash) if text else NoNetwork()


def stage_for(header, model: mf.ModelFile | None, source: str = "input") -> NoNetwork:
    """The cm profile's predictor that decodes a frame with this header: no_network(model),
    or, where the header names a record length, the stage with contexts for those records."""
    stage = no_network(model)
    if "record" not in header.metadata or stage.primer:
        return stage
    try:
        return NoNetwork(record=int(header.metadata["record"]))
    except (TypeError, ValueError) as exc:
        raise FormatError(f"{source}: bad header metadata ({exc})") from None


def _entropy(model: mf.ModelFile, config: C.Config | None) -> C.Config:
    """The model's config, with entropy.* from `config` when given (bin.compress --config)."""
    cfg = model.build_config()
    if config is None:
        return cfg
    merged = C.to_dict(cfg)
    merged["entropy"] = C.to_dict(config)["entropy"]
    return C.build(merged, "compression settings")


def _predictor(model: mf.ModelFile, prof: profiles.Profile, g: np.ndarray, match_min_len: int,
               adapt_rate: int):
    try:
        p = ExactPredictor(model, g, exit_threshold=prof.exit_threshold,
                           cascade_threshold=prof.cascade_threshold, adapt_rate=adapt_rate)
    except mf.ModelFileError as exc:  # e.g. a primer that cannot be read
        raise ModelError(str(exc)) from None
    return MatchMixer(p, MatchSettings.standard(match_min_len)) if match_min_len else p


def _encode_globals(g: np.ndarray) -> str:
    return base64.b64encode(np.asarray(g, dtype="<f4").tobytes()).decode("ascii")


def _decode_globals(text, n: int) -> np.ndarray:
    raw = base64.b64decode(str(text).encode("ascii"), validate=True)
    if len(raw) != 4 * n:
        raise ValueError(f"header holds {len(raw) // 4} global values, the model needs {n}")
    return np.frombuffer(raw, dtype="<f4").astype(np.float32)


def compress_bytes(data: bytes, model: mf.ModelFile | None, *, profile: str = "turbo",
                   config: C.Config | None = None, input_name: str = "",
                   progress: Progress | None = None, frame_bytes: int | None = None,
                   workers: int = 1, cluster=None) -> bytes:
    """`data` as .umc bytes: one frame, or several when it is larger than the profile's frame
    size (stream.py; `cluster`: a cluster.Cluster that codes them)."""
    from .stream import compress_stream
    out = io.BytesIO()
    compress_stream(io.BytesIO(data), out, model, profile=profile, config=config,
                    input_name=input_name, progress=progress, total=len(data),
                    frame_bytes=frame_bytes, workers=workers, cluster=cluster)
    return out.getvalue()


def compress_frame(data: bytes, model: mf.ModelFile | None, *, profile: str = "turbo",
                   config: C.Config | None = None, input_name: str = "",
                   progress: Progress | None = None, frame: dict | None = None,
                   x86: bool | None = None, binary: bool | None = None,
                   record: int | None = None) -> bytes:
    """One frame: `data` coded on its own; `frame` (frames.frame_meta) joins its metadata when
    the file has several. Profile auto (a frame of a file of several): fast or cm for this
    frame's bytes (choose.py), and the model named even by a cm frame, so every frame of the
    file names the same model (the decoder requires it and loads it once). `x86`: code it
    through the x86 filter; None: decided here for any profile (choose.x86_worth). `binary`,
    `record`: the cm profile unprimed with the stage's contexts for binary data (version 15),
    or for records of `record` bytes (version 16); `binary` None: both decided here
    (choose.stage_contexts), once: auto's cm sample uses the same answer."""
    if x86 is None:
        x86 = x86_worth(data, lambda d, f: compress_frame(d, None, profile="cm", x86=f))
    if binary is None:
        binary, record = contexts_for(data, model, profile, x86)
    record = record or 0
    if profile == profiles.AUTO:
        pick = choose(data, model, whole=False, x86=x86, code=lambda d, name, shown, f:
                      compress_frame(d, model, profile=name, config=config, x86=f,
                                     binary=binary, record=record)).profile
        return _frame(data, model, profiles.get(pick), config, input_name, progress, frame, True,
                      x86, (binary, record))
    return _frame(data, model, profiles.get(profile), config, input_name, progress, frame, False,
                  x86, (binary, record))


def contexts_for(data: bytes, model: mf.ModelFile | None, profile: str,
                 x86: bool) -> tuple[bool, int]:
    """(binary, record): the stage's contexts `data`'s frame, coded with `profile`, takes;
    decided (choose.stage_contexts) only where the stage alone may code it unprimed (cm, auto)."""
    if (profile != profiles.AUTO and profiles.get(profile).network) or no_network(model).primer:
        return False, 0
    return stage_contexts(data, lambda d, binary, record: compress_frame(
        d, None, profile="cm", x86=x86, binary=binary, record=record))


def _frame(data: bytes, model: mf.ModelFile | None, prof: profiles.Profile, config, input_name: str,
           progress: Progress | None, frame: dict | None, name_model: bool, x86: bool,
           contexts: tuple[bool, int]) -> bytes:
    # the input's file name, for messages and listings (none from stdin: no empty entry)
    extra = {**({"input_name": input_name[:200]} if input_name else {}), **(frame or {})}
    if not prof.network:  # the mixing stage alone; a model only for its primer, if it has one
        stage = no_network(model)
        if not stage.primer:
            stage = NoNetwork(binary=contexts[0], record=contexts[1])
            if stage.record:             # the decoder's to know (the fingerprint checks it)
                extra["record"] = stage.record
        named = {"model_hash": bytes.fromhex(model.hash), "model_name": model.name[:64]} \
            if model is not None and (stage.primer or name_model) else {}
        settings = CodecSettings(streams=1, coder="cm", block_size=CM_BLOCK, profile=prof.name,
                                 metadata=extra, x86=x86, **named)
        with paused_gc():
            return compress(data, stage, settings, progress=progress)
    if model is None:
        raise ModelError(f"profile {prof.name} needs a model")
    cfg = _entropy(model, config)
    g = document_features(data, cfg.head.d_globals)
    m = cfg.entropy.match_min_len
    meta = {"globals": _encode_globals(g), "match_min_len": m, "adapt_rate": prof.adapt_rate, **extra}
    settings = CodecSettings.from_config(cfg, streams=prof.streams_for(len(data)), profile=prof.name,
                                         model_hash=bytes.fromhex(model.hash),
                                         model_name=model.name[:64], metadata=meta)
    settings = dataclasses.replace(settings, x86=x86)
    if prof.coder:  # the profile's coder (cm mixes the network's distribution itself: no sharpening)
        settings = dataclasses.replace(settings, coder=prof.coder, sharpening=False)
    keep_pages()
    with paused_gc():
        return compress(data, _predictor(model, prof, g, m, prof.adapt_rate), settings,
                        progress=progress)


def _named(m: mf.ModelFile | None, prof: profiles.Profile) -> mf.ModelFile | None:
    """The model a file of `prof` uses and names: cm uses one only for its primer."""
    return m if m is not None and (prof.network or no_network(m).primer) else None


def compress_path(input_path: Path, output_path: Path, model: ModelSpec = None, *,
                  checkpoint: Path | None = None, config: C.Config | None = None,
                  profile: str = "turbo", progress: Progress | None = None,
                  workers: int = 1, frame_bytes: int | None = None, cluster=None) -> Result:
    """Compress a file into a .umc file (written atomically), one frame in memory at a time."""
    from .stream import compress_stream
    prof = profiles.base(profile)             # auto: its network profile until it has chosen
    m = _named(open_model(model, checkpoint) if prof.network or model or checkpoint else None,
               prof)
    t0 = time.perf_counter()
    st = _file_to_file(input_path, "input file", output_path, lambda src, dst, size: compress_stream(
        src, dst, m, profile=profile, config=config, input_name=Path(input_path).name,
        progress=progress, total=size, frame_bytes=frame_bytes, workers=workers, cluster=cluster))
    prof = profiles.get(st.profile)
    if not st.frame_profiles:                 # (auto frame by frame: every frame names it)
        m = _named(m, prof)                   # auto may have chosen cm
    return Result(CodecStats(st.read, st.written, time.perf_counter() - t0), st.picked,
                  prof.streams_for(min(st.read, prof.frame_bytes if frame_bytes is None
                                       else frame_bytes)),
                  m.label() if m else NO_MODEL, m.hash if m else "")


def model_for_file(header, model: ModelSpec = None,
                   checkpoint: Path | None = None) -> mf.ModelFile:
    """The model a .umc header names: the one given (it must have that hash), or found by hash."""
    want = header.model_hash.hex()
    if model is None and checkpoint is None:
        try:
            return store.load(store.find_hash(want, header.model_name))
        except (LookupError, mf.ModelFileError) as exc:
            raise ModelError(str(exc)) from None
    m = open_model(model, checkpoint)
    if m.hash != want:
        raise ModelError(f"this file was written with model {header.model_name or '?'} "
                         f"({want[:12]}); the given model is {m.label()}")
    return m


def decompress_bytes(blob: bytes, model: ModelSpec = None, *, checkpoint: Path | None = None,
                     progress: Progress | None = None, source: str = "input",
                     workers: int = 1, cluster=None) -> bytes:
    """The original of .umc bytes (every frame, in order, each checked against its sha256)."""
    from .stream import decompress_stream
    out = io.BytesIO()
    decompress_stream(io.BytesIO(blob), out, model, checkpoint=checkpoint, progress=progress,
                      total=len(blob), source=source, workers=workers, cluster=cluster)
    return out.getvalue()


def decompress_frame(blob: bytes, model: ModelSpec = None, *, checkpoint: Path | None = None,
                     progress: Progress | None = None, source: str = "input") -> bytes:
    """One frame's original."""
    header = read_header(blob)
    meta = header.metadata
    try:
        prof = profiles.get(header.profile)
    except UserError as exc:  # an unknown profile name
        raise FormatError(f"{source}: {exc}") from None
    if not prof.network:
        stage = stage_for(header, model_for_file(header, model, checkpoint)
                          if profiles.needs_model(header) else None, source)
        with paused_gc():
            return decompress(blob, stage, progress=progress)
    m = model_for_file(header, model, checkpoint)
    try:
        cfg = m.build_config()
        g = _decode_globals(meta["globals"], cfg.head.d_globals)
        match_min_len, adapt_rate = int(meta["match_min_len"]), int(meta["adapt_rate"])
        if match_min_len:
            MatchSettings.standard(match_min_len)   # ValueError outside the match model's range
        if not 0 <= adapt_rate <= RATE_MAX:
            raise ValueError(f"adapt_rate {adapt_rate} out of range")
    except (KeyError, ValueError, TypeError) as exc:
        raise FormatError(f"{source}: bad header metadata ({exc})") from None
    keep_pages()
    with paused_gc():
        return decompress(blob, _predictor(m, prof, g, match_min_len, adapt_rate),
                          progress=progress)


def decompress_path(input_path: Path, output_path: Path, model: ModelSpec = None, *,
                    checkpoint: Path | None = None, progress: Progress | None = None,
                    workers: int = 1, cluster=None) -> Result:
    """Decode a .umc file frame by frame; verifies each frame's sha256; writes the output
    atomically or not at all."""
    from .stream import decompress_stream
    t0 = time.perf_counter()
    st = _file_to_file(input_path, ".umc file", output_path, lambda src, dst, size: decompress_stream(
        src, dst, model, checkpoint=checkpoint, progress=progress, total=size,
        source=str(input_path), workers=workers, cluster=cluster))
    header = st.header
    stats = CodecStats(st.written, st.read, time.perf_counter() - t0)
    if not any(header.model_hash):
        return Result(stats, header.profile, header.streams, NO_MODEL, "")
    return Result(stats, header.profile, header.streams,
                  f"{header.model_name} ({header.model_hash.hex()[:12]})", header.model_hash.hex())
