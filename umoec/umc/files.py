"""One file through the codec, all-or-nothing: compress, decompress or test it.

Imported only after threads.prepare: it loads numpy, which reads its thread settings then.
The whole result is made in memory; a file target is written to a temp file renamed into place
(umoec.run.atomic) and stdout is written only after success, so a failure or a kill never leaves
half an output. --rm deletes the source only after the written output has been read back and
decoded (decompressing: hashed) to the original's sha256.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

from ..cli import EXIT_FAILURE, UserError
from ..codec import CodecStats, Header, read_header
from ..compress import api
from ..engine.modelfile import ModelFile
from ..progress import ProgressBar
from ..run.atomic import atomic_write_bytes
from .names import STDIO, check_source, check_target, show


def _stderr(msg: str) -> None:
    print(msg, file=sys.stderr)


@dataclass(frozen=True)
class Options:
    model: Optional[ModelFile]    # compressing: the model; decoding: None = the header's model
    profile: str = "fast"
    force: bool = False           # -f
    remove: bool = False          # --rm
    verbosity: int = 1            # 0 -q, 1 normal, 2 -v
    say: Callable[[str], None] = _stderr

    def note(self, level: int, msg: str) -> None:
        if self.verbosity >= level:
            self.say(msg)


def _read(source: str) -> bytes:
    try:
        return sys.stdin.buffer.read() if source == STDIO else Path(source).read_bytes()
    except OSError as exc:
        raise UserError(f"cannot read: {exc.strerror or exc}", EXIT_FAILURE) from None


def _write(target: Optional[str], data: bytes, source: str) -> None:
    if target is None:
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
        return
    try:
        atomic_write_bytes(target, data)
    except OSError as exc:
        raise UserError(f"cannot write {target}: {exc.strerror or exc}", EXIT_FAILURE) from None
    if source != STDIO:
        try:
            shutil.copystat(source, target)  # zstd keeps the source's mode and times
        except OSError:
            pass


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


def _removes(source: str, target: Optional[str], opts: Options) -> bool:
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


def _out(target: Optional[str]) -> str:
    return "(stdout)" if target is None else target


def compress_one(source: str, target: Optional[str], opts: Options) -> str:
    """Compress `source` to `target`; returns the summary line."""
    check_source(source)
    check_target(source, target, opts.force)
    data = _read(source)
    name = "" if source == STDIO else Path(source).name
    blob, seconds = _coded(opts, show(source), lambda bar: api.compress_bytes(
        data, opts.model, profile=opts.profile, input_name=name, progress=bar))
    _write(target, blob, source)
    line = f"{show(source)} -> {_out(target)}: {CodecStats(len(data), len(blob), seconds).summary()}"
    if _removes(source, target, opts):
        _verify_compressed(target, hashlib.sha256(data).digest(), opts)
        _remove_source(source)
        line += "; verified, source removed"
    return line


def _verify_compressed(target: str, sha256: bytes, opts: Options) -> None:
    """Decode the file as written on disk; a bad one is removed and the source kept."""
    try:
        blob = Path(target).read_bytes()
        back, _ = _coded(opts, f"verify {target}", lambda bar: api.decompress_bytes(
            blob, opts.model, progress=bar, source="header"))
        why = "" if hashlib.sha256(back).digest() == sha256 else "decoded bytes differ"
    except (UserError, OSError) as exc:
        why = str(exc)
    if why:
        _discard(target)
        raise UserError(f"verifying {target} failed ({why}): it was removed, the source is "
                        "kept", EXIT_FAILURE)


def _decode(source: str, opts: Options) -> tuple[bytes, bytes, float, Header]:
    """(the .umc bytes, the decoded original, seconds, header); the sha256 is checked."""
    blob = _read(source)
    header = read_header(blob)
    opts.note(2, f"umc: {show(source)}: model {header.model_name or '?'} "
              f"({header.model_hash.hex()[:12]}), profile {header.profile}, {header.streams} streams")
    data, seconds = _coded(opts, show(source), lambda bar: api.decompress_bytes(
        blob, opts.model, progress=bar, source="header"))
    return blob, data, seconds, header


def decompress_one(source: str, target: Optional[str], opts: Options) -> str:
    """Decode `source` (sha256 verified) to `target`; returns the summary line."""
    check_source(source)
    check_target(source, target, opts.force)
    blob, data, seconds, header = _decode(source, opts)
    _write(target, data, source)
    line = f"{show(source)} -> {_out(target)}: {CodecStats(len(data), len(blob), seconds).summary()}"
    if _removes(source, target, opts):
        try:  # decoding already checked the sha256; this checks what reached the disk
            ok = hashlib.sha256(Path(target).read_bytes()).digest() == header.sha256
        except OSError:
            ok = False
        if not ok:
            _discard(target)
            raise UserError(f"{target} does not read back as written: it was removed, the "
                            "source is kept", EXIT_FAILURE)
        _remove_source(source)
        line += "; verified, source removed"
    return line


def verify_one(source: str, target: Optional[str], opts: Options) -> str:
    """Decode and verify `source`, writing nothing (target is ignored)."""
    check_source(source)
    _, data, seconds, header = _decode(source, opts)
    return (f"{show(source)}: OK, {len(data):,} bytes, sha256 verified (model "
            f"{header.model_name or '?'}, {seconds:.2f} s)")
