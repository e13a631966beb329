"""Run management: the run list, rename, delete and notes, kept inside the runs folder. No Dash.

Only our run folders directly inside the runs folder (a plain name, never a path) are changed;
Forge folders are read-only. A run whose process is alive is neither renamed nor deleted. A new
name is sanitised and never replaces a folder; a symlinked run is renamed or removed as a link.
Notes live in RUNDIR/notes.md (atomic writes, at most MAX_NOTES characters).
"""
from __future__ import annotations

import os
import re
import shutil
import time
from contextlib import suppress
from pathlib import Path
from typing import Any

from umoec.run import RunDir, RunState
from umoec.run.atomic import atomic_write_text
from umoec.run.forge import ForgeFormatError
from umoec.run.layout import list_runs

from . import forge
from .launcher import sanitise_name
from .runs import resolve, summarise

MAX_NOTES = 100_000
NOTE_PREVIEW = 80          # characters of the notes' first line shown in the Runs table


class RunAdminError(ValueError):
    """A rename, delete or notes change is refused; the message says why."""


def _own_run(runs_dir: Path, name: str | None) -> RunDir:
    run = resolve(runs_dir, name)
    if run is None:
        if (fr := forge.resolve_forge(runs_dir, name)) is not None:
            raise RunAdminError(f"{fr.label}: Forge runs are opened read-only")
        raise RunAdminError(f"{name!r} is not a run in {runs_dir}")
    if Path(os.path.abspath(run.root)).parent != Path(os.path.abspath(runs_dir)):
        raise RunAdminError(f"{run.root} is not directly inside the runs folder")
    return run


def busy_reason(run: RunDir, launcher: Any = None) -> str | None:
    """Why the run's folder is in use (its process alive), or None."""
    launched = launcher.get(run.name) if launcher is not None else None
    if launched is not None and launched.alive:
        return f"{run.name} has a live process (pid {launched.pid}) started by this cockpit"
    s = summarise(run)
    if s.state in (RunState.RUNNING, RunState.STALLED):
        return f"{run.name} is {s.label.lower()}; stop it first"
    return None


def rename_run(runs_dir: Path, old: str | None, new: str | None, launcher: Any = None) -> str:
    """Rename run `old` to the sanitised `new`; returns the new name."""
    run = _own_run(runs_dir, old)
    if not (clean := sanitise_name(new)):
        raise RunAdminError("type a new name (letters, digits, '.', '_' or '-')")
    if clean == run.name:
        raise RunAdminError(f"{run.name} already has that name")
    if reason := busy_reason(run, launcher):
        raise RunAdminError(f"not renamed: {reason}")
    target = Path(runs_dir) / clean
    if os.path.lexists(target):
        raise RunAdminError(f"not renamed: {clean} already exists in the runs folder")
    try:
        os.rename(run.root, target)
    except OSError as exc:
        raise RunAdminError(f"not renamed: {exc.strerror or exc}") from None
    return clean


def delete_run(runs_dir: Path, name: str | None, launcher: Any = None) -> str:
    """Delete run `name` (its whole folder); returns what was removed."""
    run = _own_run(runs_dir, name)
    if reason := busy_reason(run, launcher):
        raise RunAdminError(f"not deleted: {reason}")
    try:
        if run.root.is_symlink():
            os.unlink(run.root)
            return f"Removed the link {run.name} (its target was left alone)."
        files, size = folder_size(run.root)
        shutil.rmtree(run.root)
    except OSError as exc:
        raise RunAdminError(f"not deleted: {exc.strerror or exc}") from None
    return f"Deleted {run.name} ({files} files, {size / 1e6:.1f} MB)."


def folder_size(path: Path) -> tuple[int, int]:
    """(files, bytes) under `path`, symlinks not followed."""
    files = size = 0
    for root, _dirs, names in os.walk(path):
        for n in names:
            with suppress(OSError):
                size += os.lstat(os.path.join(root, n)).st_size
                files += 1
    return files, size


def read_notes(runs_dir: Path, name: str | None) -> str:
    run = _own_run(runs_dir, name)
    try:
        return run.notes_path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return ""
    except (OSError, UnicodeDecodeError) as exc:
        raise RunAdminError(f"cannot read {run.notes_path.name}: {exc}") from None


def write_notes(runs_dir: Path, name: str | None, text: str | None) -> str:
    run = _own_run(runs_dir, name)
    text = (text or "").replace("\r\n", "\n")
    if len(text) > MAX_NOTES:
        raise RunAdminError(f"notes are {len(text):,} characters; at most {MAX_NOTES:,}")
    try:
        atomic_write_text(run.notes_path, text)
    except OSError as exc:
        raise RunAdminError(f"notes not saved: {exc.strerror or exc}") from None
    return f"Saved notes of {run.name} ({len(text):,} characters)."


def _first_line(lines: list[str], limit: int = NOTE_PREVIEW) -> str:
    """The notes' first line for the table, cut at a word with an ellipsis when long."""
    line = lines[0] if lines else ""
    if len(line) <= limit:
        return line
    return line[:limit].rsplit(" ", 1)[0].rstrip(" ,;:.") + "…"


TAG_RE = re.compile(r"(?<![\w&])#([A-Za-z][\w.-]*)")


def tags_of(text: str) -> str:
    """The #tags anywhere in a run's notes, sorted ("#baseline #lr-sweep"), for the Runs table."""
    return " ".join("#" + t for t in sorted({m.rstrip(".-") for m in TAG_RE.findall(text)},
                                            key=str.lower))


def _when(t: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(t)) if t else ""


def run_rows(runs_dir: Path) -> list[dict[str, Any]]:
    """The Runs tab's table: ours (newest first), then Forge runs."""
    rows = []
    for run in list_runs(runs_dir):
        s = summarise(run)
        try:
            text = run.notes_path.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError):
            text = ""
        updated = max((p.stat().st_mtime for p in (run.status_path, run.config_path) if p.exists()),
                      default=0.0)
        rows.append({"run": run.name, "key": run.name,
                     "kind": "simulated" if s.simulated else "u-moec-tiny",
                     "status": s.label, "steps": s.step, "total_steps": s.total_steps,
                     "updated": _when(updated), "tags": tags_of(text),
                     "notes": _first_line(text.splitlines())})
    for fr in forge.forge_runs(runs_dir):
        age = fr.log_age()
        try:
            steps = fr.read_log().train["step"]
            last = int(steps.iloc[-1]) if len(steps) else None
        except ForgeFormatError:
            last = None
        rows.append({"run": fr.label, "key": fr.key, "kind": "Forge", "status": fr.status_label(),
                     "steps": last, "total_steps": None,
                     "updated": _when(None if age is None else time.time() - age), "tags": "",
                     "notes": "read-only"})
    return rows
