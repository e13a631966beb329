"""One file through the codec: compress, decompress or test it, one frame at a time.

Imported only after threads.prepare: it loads numpy, which reads its thread settings then.
Input is read and output written frame by frame (umoec/compress/stream.py), so memory stays
bounded for inputs of any size; `workers` processes (or a Dask cluster) code the frames of a
large input in parallel (the bytes written never depend on it). A file target is written to a
temp file renamed into place (umoec.run.atomic), so a failure or a kill never leaves half a
file; stdout receives each frame when it is done (as zstd and xz do), so a failure there ends
the output early with a non-zero exit. --rm deletes the source only after the written output has
been read back and decoded (decompressing: hashed) to the original's sha256.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, TypeVar

from ..codec import CodecStats
from ..compress.stream import StreamStats, compress_stream, decompress_stream
from ..engine.modelfile import ModelFile
from ..errors import EXIT_FAILURE, UserError
from ..progress import ProgressBar
from ..run.atomic import atomic_write
from .names import STDIO, check_source, check_target, show

T = TypeVar("T")


def _stderr(msg: str) -> None:
    print(msg, file=sys.stderr)


@dataclass(frozen=True)
class Options:
    model: ModelFile | None    # compressing: the model; decoding: None = the header's model
    profile: str = "fast"
    force: bool = False           # -f
    remove: bool = False          # --rm
    verbosity: int = 1            # 0 -q, 1 normal, 2 -v
    workers: int = 1              # processes coding frames (-T; decoding, 0: from the idle cores)
    frame_bytes: int | None = None   # --frame-size (None: the profile's)
    cluster: object = None        # --cluster: a compress.cluster.Cluster coding the frames
    say: Callable[[str], None] = _stderr

    def note(self, level: int, msg: str) -> None:
        if self.verbosity >= level:
            self.say(msg)


def _open(source: str) -> tuple[BinaryIO, int]:
    """(the source as a binary stream, its size or 0 when unknown)."""
    if source == STDIO:
        return sys.stdin.buffer, 0
    try:
        fh = open(source, "rb")  # noqa: SIM115 (returned to the caller, who closes it)
        return fh, os.fstat(fh.fileno()).st_size
    except OSError as exc:
        raise UserError(f"cannot read: {exc.strerror or exc}", EXIT_FAILURE) from None


def _through(source: str, target, code: Callable[[BinaryIO, BinaryIO, int], T]) -> T:
    """code(src, dst, size) from the source to the target: a file name (a temp file renamed into
    place), None (stdout, as the frames come) or a sink object (written to as it is)."""
    src, size = _open(source)
    try:
        if target is None or not isinstance(target, str):
            dst = sys.stdout.buffer if target is None else target
            out = code(src, dst, size)
            if target is None:
                sys.stdout.buffer.flush()
            return out
        done = []
        try:
            atomic_write(target, lambda dst: done.append(code(src, dst, size)), unnamed=True)
        except OSError as exc:
            raise UserError(f"cannot write {target}: {exc.strerror or exc}", EXIT_FAILURE) from None
    finally:
        if src is not sys.stdin.buffer:
            src.close()
    if source != STDIO:
        try:
            shutil.copystat(source, target)  # zstd keeps the source's mode and times
        except OSError:
            pass
    return done[0]


def _discard(target: str) -> None:
    try:
        os.unlink(target)
    except OSError:
        pass


def _coded(opts: Options, label: str, work: Callable) -> tuple[bytes, float]:
    """work(progress) under a progress bar (drawn only on a terminal); (result, seconds)."""
    bar = ProgressBar(label) if opts.verbosity >= 1 else None
    t0 = time.perf_counter()
    try:
        return work(bar), time.perf_counter() - t0
    finally:
        if bar is not None:
            bar.close()


def _removes(source: str, target: str | None, opts: Options) -> bool:
    if opts.remove and (target is None or source == STDIO):
        opts.note(1, f"umc: {show(source)}: --rm ignored: the output goes to stdout or the input "
                  "is stdin")
    return opts.remove and target is not None and source != STDIO


def _remove_source(source: str) -> None:
    try:
        os.unlink(source)
    except OSError as exc:
        raise UserError(f"output written, but the source could not be removed: "
                        f"{exc.strerror or exc}", EXIT_FAILURE) from None


def _out(target: str | None) -> str:
    return "(stdout)" if target is None else target


def compress_one(source: str, target: str | None, opts: Options) -> str:
    """Compress `source` to `target`; returns the summary line."""
    check_source(source)
    check_target(source, target, opts.force)
    name = "" if source == STDIO else Path(source).name
    st, seconds = _coded(opts, show(source), lambda bar: _through(
        source, target, lambda src, dst, size: compress_stream(
            src, dst, opts.model, profile=opts.profile, input_name=name, progress=bar,
            total=size, workers=opts.workers, frame_bytes=opts.frame_bytes,
            cluster=opts.cluster)))
    line = f"{show(source)} -> {_out(target)}: {CodecStats(st.read, st.written, seconds).summary()}"
    if st.choice:
        opts.note(2, f"umc: {show(source)}: auto chose {st.picked} on {st.choice}")
        line += f", auto: {st.picked}"
    if st.x86_frames:
        line += ", x86 filter" + (f" ({st.x86_frames} of {st.frames} frames)"
                                  if st.frames > 1 else "")
    if _removes(source, target, opts):
        _verify_compressed(target, st.sha256, opts)
        _remove_source(source)
        line += "; verified, source removed"
    return line


def _verify_compressed(target: str, sha256: bytes, opts: Options) -> None:
    """Decode the file as written on disk; a bad one is removed and the source kept."""
    try:
        with open(target, "rb") as src:
            back, _ = _coded(opts, f"verify {target}", lambda bar: decompress_stream(
                src, _Discard(), opts.model, progress=bar, total=os.fstat(src.fileno()).st_size,
                source="header", workers=opts.workers, cluster=opts.cluster))
        why = "" if back.sha256 == sha256 else "decoded bytes differ"
    except (UserError, OSError) as exc:
        why = str(exc)
    if why:
        _discard(target)
        raise UserError(f"verifying {target} failed ({why}): it was removed, the source is "
                        "kept", EXIT_FAILURE)


class _Discard:
    """A sink for `umc -t` and verification: decoded bytes are hashed, not kept."""

    def write(self, data: bytes) -> int:
        return len(data)


def _decode(source: str, target, opts: Options) -> tuple[StreamStats, float]:
    """Decode `source` into `target` (a file name; None: stdout; _Discard(): nowhere), every
    frame's sha256 checked."""
    st, seconds = _coded(opts, show(source), lambda bar: _through(
        source, target, lambda src, dst, size: decompress_stream(
            src, dst, opts.model, progress=bar, total=size, source="header",
            workers=opts.workers, cluster=opts.cluster)))
    h = st.header
    opts.note(2, f"umc: {show(source)}: model {h.model_name or '?'} ({h.model_hash.hex()[:12]}), "
              f"profile {h.profile}, {h.streams} streams, {st.frames} frame(s)")
    return st, seconds


def decompress_one(source: str, target: str | None, opts: Options) -> str:
    """Decode `source` (sha256 verified) to `target`; returns the summary line."""
    check_source(source)
    check_target(source, target, opts.force)
    st, seconds = _decode(source, target, opts)
    line = f"{show(source)} -> {_out(target)}: {CodecStats(st.written, st.read, seconds).summary()}"
    if _removes(source, target, opts):
        try:  # decoding already checked the sha256; this checks what reached the disk
            with open(target, "rb") as fh:
                ok = hashlib.file_digest(fh, "sha256").digest() == st.sha256
        except OSError:
            ok = False
        if not ok:
            _discard(target)
            raise UserError(f"{target} does not read back as written: it was removed, the "
                            "source is kept", EXIT_FAILURE)
        _remove_source(source)
        line += "; verified, source removed"
    return line


def verify_one(source: str, target: str | None, opts: Options) -> str:
    """Decode and verify `source`, writing nothing (target is ignored)."""
    check_source(source)
    st, seconds = _decode(source, _Discard(), opts)
    h = st.header
    model = (h.model_name or "?") if any(h.model_hash) else "none"
    return (f"{show(source)}: OK, {st.written:,} bytes, sha256 verified (model {model}, "
            f"{seconds:.2f} s)")
