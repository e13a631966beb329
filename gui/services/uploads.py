"""The upload sandbox: files sent through the browser are stored in one folder, under safe names.

A browser (or a crafted request) may send any name: `../../x`, `/etc/passwd`, NUL bytes, 300
characters. `safe_upload_name` keeps the last path component's letters, digits, '.', '_' and '-'
(at most 100 characters, never hidden, never '.' or '..'); `store_upload` writes a new file directly
inside the sandbox (never overwriting or following a link). The sandbox (default
/tmp/u-moec-uploads, `--upload-dir`) must be a real folder of the cockpit's user (mode 0700).
"""
from __future__ import annotations

import base64
import binascii
import os
import re
import stat
import time
from pathlib import Path

from umoec.units import FILE_UNITS, fmt_bytes

DEFAULT_UPLOAD_DIR = Path("/tmp/u-moec-uploads")
DEFAULT_MAX_UPLOAD_MB = 50.0
MAX_NAME = 100                     # characters kept of a sanitised name
UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


class UploadError(ValueError):
    """An upload was refused; the message says why and what to do instead."""


def safe_upload_name(filename: str | None) -> str:
    """A file name that is safe to create inside the sandbox (see the module docstring)."""
    text = (filename or "").replace("\x00", "").replace("\\", "/")
    text = text.rsplit("/", 1)[-1]                   # last path component only
    text = UNSAFE.sub("-", text).strip(".-_")        # no hidden files, no '.' / '..'
    stem, dot, ext = text.rpartition(".")
    if not dot:
        stem, ext = text, ""
    ext = ext[:16]
    room = MAX_NAME - (len(ext) + 1 if ext else 0)
    stem = stem[:room].rstrip(".-_")
    if not stem:
        return f"upload.{ext}" if ext else "upload"
    return f"{stem}.{ext}" if ext else stem


def format_bytes(n: float) -> str:
    """1234567 -> '1.23 MB' (decimal units with two decimals, as file managers show sizes)."""
    return fmt_bytes(n, ",.2f", FILE_UNITS)


def too_large_message(name: str, size: int, max_bytes: int) -> str:
    return (f"{name or 'the file'} is {format_bytes(size)}: uploads are limited to "
            f"{format_bytes(max_bytes)} (python gui/app.py --max-upload-mb). For a larger file, "
            "type its path in the box above instead.")


def ensure_sandbox(sandbox: str | os.PathLike) -> Path:
    """Create the sandbox (0700) or check an existing one is a real folder owned by us."""
    path = Path(sandbox)
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = os.lstat(path)
    except OSError as exc:
        raise UploadError(f"cannot create the upload folder {path}: {exc.strerror or exc} "
                          "(choose another with --upload-dir)") from None
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
        raise UploadError(f"the upload folder {path} is not a real folder (a link?); refusing to "
                          "store uploads there (choose another with --upload-dir)")
    if st.st_uid != os.getuid():
        raise UploadError(f"the upload folder {path} belongs to another user; refusing to store "
                          "uploads there (choose another with --upload-dir)")
    if stat.S_IMODE(st.st_mode) != 0o700:
        try:
            os.chmod(path, 0o700)  # ours: other local users need not list what was uploaded
        except OSError:
            pass
    return path.resolve()


def decode_contents(contents: str) -> bytes:
    """The bytes of a dcc.Upload `contents` string ('data:<type>;base64,<data>')."""
    _, _, data = (contents or "").partition(",")
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise UploadError("the upload arrived damaged (not base64); try again") from None


def decoded_size(contents: str) -> int:
    """Size of the decoded upload, computed without decoding it."""
    _, _, data = (contents or "").partition(",")
    return max(0, len(data) * 3 // 4 - data[-2:].count("="))


def store_upload(sandbox: str | os.PathLike, filename: str | None, data: bytes,
                 max_bytes: int) -> Path:
    """Write `data` to a new file directly inside `sandbox`; returns its path."""
    name = safe_upload_name(filename)
    if len(data) > max_bytes:
        raise UploadError(too_large_message(name, len(data), max_bytes))
    root = ensure_sandbox(sandbox)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    for i in range(1, 1000):
        candidate = root / (f"{stamp}-{name}" if i == 1 else f"{stamp}-{i}-{name}")
        if candidate.resolve().parent != root:   # cannot happen with a sanitised name; checked
            raise UploadError(f"refusing upload name {filename!r}")
        try:
            fd = os.open(candidate, flags, 0o600)
        except FileExistsError:
            continue
        except OSError as exc:
            raise UploadError(f"cannot store the upload in {root}: {exc.strerror or exc}") from None
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            return candidate
        except OSError as exc:
            candidate.unlink(missing_ok=True)
            raise UploadError(f"cannot store the upload in {root}: {exc.strerror or exc}") from None
    raise UploadError(f"too many uploads named {name!r} this second in {root}; try again")
