"""The cockpit's Forge runs (read-only): the folders it lists (inside the runs folder, or opened by
path and remembered), their run-selector keys, and their logs cached between refreshes. The folder
format itself is umoec/run/forge.py's."""
from __future__ import annotations

import json
import threading
from pathlib import Path

from umoec.run import RunDir, forge
from umoec.run.atomic import atomic_write_text
from umoec.run.forge import LOG_NAME, ForgeFormatError, ForgeLog, is_forge_dir

from .cache import SignatureCache
from .runs import resolve

KEY_PREFIX = "forge:"   # run-selector value of a Forge folder opened from outside the runs folder
_LOG_CACHE = SignatureCache(16)   # log.csv per Forge run, rebuilt when the file changes


class ForgeRun(forge.ForgeRun):
    """A Forge run as the cockpit shows it: its log is re-read only when the file changed."""

    def read_log(self) -> ForgeLog:
        sig = self.signature()
        if sig is None:
            raise ForgeFormatError(f"{self.log_path}: no such file")
        parse = super().read_log
        return _LOG_CACHE.get(str(self.log_path), sig, lambda _stale: parse())


# == where Forge runs come from =================================================================
class ForgeRegistry:
    """Forge folders opened by path in this cockpit, kept in the JSON file `store` (if given) so
    a restarted cockpit lists them again."""

    def __init__(self, store: Path | None = None):
        self._lock = threading.Lock()
        self._store = Path(store) if store is not None else None
        self._paths: list[Path] = []
        if self._store is not None:
            try:
                saved = json.loads(self._store.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                saved = []
            self._paths = [Path(p) for p in (saved if isinstance(saved, list) else [])
                           if isinstance(p, str) and is_forge_dir(Path(p), need_checkpoint=False)]

    def add(self, path: Path) -> Path:
        path = Path(path).resolve()
        with self._lock:
            if path not in self._paths:
                self._paths.append(path)
                if self._store is not None:
                    try:
                        atomic_write_text(self._store, json.dumps([str(p) for p in self._paths]))
                    except OSError:
                        pass   # remembered for this session only
        return path

    def paths(self) -> list[Path]:
        with self._lock:
            return list(self._paths)


OPENED_FILE = ".forge_opened.json"      # in the runs folder: Forge folders opened by path


def registry() -> ForgeRegistry | None:
    """The serving app's registry (inside a request), else None."""
    from ..context import current
    ctx = current()
    return ctx.forge if ctx is not None else None


def external_key(path: Path) -> str:
    return KEY_PREFIX + str(Path(path).resolve())


def open_path(text: str | None, reg: ForgeRegistry | None, base: Path | None = None) -> ForgeRun:
    """Open a Forge run folder typed by the user (read-only); ForgeFormatError says why not."""
    text = (text or "").strip()
    if not text:
        raise ForgeFormatError("type the path of a Forge run folder (the --out folder of forge train)")
    if "\x00" in text:
        raise ForgeFormatError("the path contains a NUL character")
    path = (base or Path.cwd()) / Path(text).expanduser()      # an absolute path stays as it is
    if path.is_file() and path.name == LOG_NAME:
        path = path.parent
    if not path.is_dir():
        raise ForgeFormatError(f"{path}: no such folder")
    if RunDir(path).exists():
        raise ForgeFormatError(f"{path} is a u-moec-tiny run folder, not a Forge one: put it in the "
                               "runs folder to see it")
    if not (path / LOG_NAME).is_file():
        raise ForgeFormatError(f"{path} has no log.csv: not a Forge run folder")
    run = ForgeRun(path.resolve(), external_key(path))
    run.read_log()  # refuse now, with the reason, rather than on every refresh
    if reg is None:
        raise ForgeFormatError("no cockpit is serving: nothing to open the run in")
    reg.add(path)
    return run


def forge_runs(runs_dir: Path, reg: ForgeRegistry | None = None) -> list[ForgeRun]:
    """Forge folders directly inside the runs folder, then those opened by path."""
    try:
        out = [ForgeRun(p, p.name) for p in sorted(Path(runs_dir).iterdir(), key=lambda p: p.name)
               if is_forge_dir(p)]
    except OSError:
        out = []
    reg = reg if reg is not None else registry()
    return out + [ForgeRun(p, external_key(p)) for p in (reg.paths() if reg else [])
                  if is_forge_dir(p, need_checkpoint=False)]


def forge_options(runs_dir: Path, reg: ForgeRegistry | None = None) -> list[dict]:
    """Run-selector options of the Forge runs, each labelled '(Forge, read-only)'."""
    return [{"label": r.label, "value": r.key} for r in forge_runs(runs_dir, reg)]


def not_usable_here(runs_dir: Path, key: str | None, what: str) -> str | None:
    """Why `what` (compression, evaluation, generation) cannot use a selected Forge run, or None
    when the key is not a Forge run."""
    run = resolve_forge(runs_dir, key)
    if run is None:
        return None
    return (f"{run.label} is a Forge run: its checkpoints are Forge's own format, which this "
            f"cockpit reads for charts only and cannot load as a model, so {what} cannot use "
            "it. Select one of this project's runs for that.")


def resolve_forge(runs_dir: Path, key: str | None,
                  reg: ForgeRegistry | None = None) -> ForgeRun | None:
    """The Forge run a selector value names: a folder directly inside runs_dir, or one opened by
    path in this cockpit (never any other path)."""
    if not key:
        return None
    if key.startswith(KEY_PREFIX):
        reg = reg if reg is not None else registry()
        path = Path(key[len(KEY_PREFIX):])
        if reg is None or path not in reg.paths() or not is_forge_dir(path, need_checkpoint=False):
            return None
        return ForgeRun(path, key)
    if "/" in key or "\\" in key or key in (".", ".."):
        return None
    path = Path(runs_dir) / key
    return ForgeRun(path, key) if is_forge_dir(path) else None


def resolve_any(runs_dir: Path, key: str | None) -> tuple[RunDir | None, ForgeRun | None]:
    """(this project's run, None) for a selector value, else (None, its Forge run or None)."""
    run = resolve(runs_dir, key)
    return run, (resolve_forge(runs_dir, key) if run is None else None)
