"""Where each input's output goes (zstd's naming rules), decided before any coding work.

A source is a path or "-" (stdin); a target is a path or None (stdout). Refusals are per file
(exit status 1), so the other files of the call still run.
"""
from __future__ import annotations

import os
from pathlib import Path

from ..errors import EXIT_FAILURE, UserError

SUFFIX = ".umc"
STDIO = "-"


def show(source: str) -> str:
    """A source as messages name it."""
    return "(stdin)" if source == STDIO else source


def target_for(source: str, *, decompress: bool, to_stdout: bool,
               output: str | None) -> str | None:
    """The output path for `source`, or None for stdout."""
    if to_stdout or (source == STDIO and output is None):
        return None
    if output is not None:
        return output
    name = Path(source).name
    if decompress:
        if not name.endswith(SUFFIX) or name == SUFFIX:
            raise UserError(f"unknown suffix, expected {SUFFIX}: not decompressed (name the "
                            "output with -o, or use -c)", EXIT_FAILURE)
        return source[:-len(SUFFIX)]
    if name.endswith(SUFFIX):
        raise UserError(f"already has the {SUFFIX} suffix: skipped (use -o or -c to compress "
                        "it anyway)", EXIT_FAILURE)
    return source + SUFFIX


def check_source(source: str) -> None:
    """A readable regular file (or stdin); raises the OSError a user expects otherwise."""
    if source == STDIO:
        return
    if os.path.isdir(source):
        raise UserError("is a directory: skipped", EXIT_FAILURE)
    if not os.path.exists(source):
        raise UserError("No such file or directory", EXIT_FAILURE)


def check_target(source: str, target: str | None, force: bool) -> None:
    """Refuse to overwrite without -f, to replace the input, or to write into no folder."""
    if target is None:
        return
    if os.path.lexists(target):
        if source != STDIO and os.path.exists(target) and os.path.samefile(source, target):
            raise UserError(f"output {target} is the input itself: refused", EXIT_FAILURE)
        if os.path.isdir(target):
            raise UserError(f"output {target} is a directory", EXIT_FAILURE)
        if not force:
            raise UserError(f"{target} already exists; not overwritten (use -f to overwrite)",
                            EXIT_FAILURE)
    parent = Path(target).parent
    if not parent.is_dir():
        # atomic_write would create missing folders; a typo in -o should not
        why = "is not a folder" if parent.exists() else "does not exist"
        raise UserError(f"cannot write {target}: {parent} {why}", EXIT_FAILURE)
