"""Atomic file writes: write a temp file in the same folder, fsync, then rename over the target.

A reader (or a crash) sees either the old file or the new one, never half of one. Long writes
(a compressor streaming its output, `unnamed=True`) write into an unnamed file (Linux O_TMPFILE)
given a name only when complete, so even a SIGKILL mid-write leaves nothing behind; where the
file system has no unnamed files, a hidden `.NAME.*.tmp` is used as for short writes.
"""
from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


# mkstemp creates 0600 files; a run's files should get the usual permissions.
FILE_MODE = 0o666 & ~_umask()


def _unnamed(folder: Path) -> int | None:
    """A file in `folder` with no name yet (O_TMPFILE), or None where that is not supported."""
    flag = getattr(os, "O_TMPFILE", 0)
    if not flag or not os.path.isdir("/proc/self/fd"):
        return None
    try:
        return os.open(folder, flag | os.O_WRONLY, FILE_MODE)
    except OSError:
        return None


def _write_unnamed(fd: int, path: Path, write: Callable[[object], None]) -> Path:
    with os.fdopen(fd, "wb") as fh:
        write(fh)
        fh.flush()
        os.fsync(fh.fileno())
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{fd}.tmp")
        folder = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
        try:  # linkat(AT_SYMLINK_FOLLOW) names the open file; dir fds make CPython use linkat
            os.link(f"/proc/self/fd/{fh.fileno()}", tmp.name, src_dir_fd=folder,
                    dst_dir_fd=folder, follow_symlinks=True)
        finally:
            os.close(folder)
    try:
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
    return path


def atomic_write(path: str | os.PathLike, write: Callable[[object], None], mode: str = "wb",
                 *, unnamed: bool = False) -> Path:
    """Call `write(fileobj)` on a temp file next to `path`, then rename it to `path`
    (`unnamed`: a binary write into a file without a name until it is complete)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if unnamed and "b" in mode:
        fd = _unnamed(path.parent)
        if fd is not None:
            return _write_unnamed(fd, path, write)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, FILE_MODE)
        with os.fdopen(fd, mode, **({} if "b" in mode else {"encoding": "utf-8"})) as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    return path


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> Path:
    return atomic_write(path, lambda fh: fh.write(data), "wb")


def atomic_write_text(path: str | os.PathLike, text: str) -> Path:
    return atomic_write(path, lambda fh: fh.write(text), "w")
