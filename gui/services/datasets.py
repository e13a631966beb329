"""Datasets as the cockpit sees them: listing, preview, which run uses which, and building new ones.

A dataset is a folder made by `python -m bin.prepare_data` (docs/training.md), read by
umoec.data.dataset.DatasetInfo (the trainer's reader too), directly inside the cockpit's datasets
folder (`--data-dir`, default <repo>/data). A folder that does not hold a whole dataset is listed
with what is wrong, never hidden. Builds run prepare_data as a supervised background process
(output in <dataset>/prepare.log, which the page tails). No torch here.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO

import yaml

from umoec.data.dataset import NOT_A_DATASET, DatasetInfo, bin_path, read_record
from umoec.run.layout import list_runs

from .cache import SignatureCache
from .launcher import describe_exit, last_output_line, sanitise_name
from .supervisor import Child, SpawnError, Supervisor

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_DATA_DIR = ROOT / "data"
BUILD_LOG = "prepare.log"
PREVIEW_BYTES = 4096
MAX_FILES_SHOWN = 200


# -- reading -------------------------------------------------------------------------------------
def read_dataset(folder: Path) -> DatasetInfo:
    """What `folder` holds (umoec's DatasetInfo.read); a folder without dataset.json whose build
    log is there is an interrupted or failed build, with the last line the build printed."""
    info = DatasetInfo.read(folder)
    build_log = Path(folder) / BUILD_LOG
    if info.problem == NOT_A_DATASET and build_log.is_file():
        last = last_output_line(build_log)
        return replace(info, problem="incomplete: no dataset.json (the build failed or was "
                       "interrupted" + (f": {last})" if last else ")"))
    return info


def list_datasets(data_dir: Path) -> list[DatasetInfo]:
    """Every (non-hidden) folder directly inside data_dir, sorted by name."""
    try:
        entries = sorted(p for p in Path(data_dir).iterdir() if p.is_dir()
                         and not p.name.startswith("."))
    except (FileNotFoundError, NotADirectoryError):
        return []
    return [read_dataset(p) for p in entries]


def resolve_dataset(data_dir: Path, name: str | None) -> Path | None:
    """The folder called `name` directly inside data_dir (never a path outside it)."""
    if not name or "/" in name or "\\" in name or name in (".", "..") or name.startswith("."):
        return None
    folder = Path(data_dir) / name
    return folder if folder.is_dir() else None


def config_path_value(folder: Path, root: Path = ROOT) -> str:
    """What to put in data.path for `folder`: relative to the repository when inside it (the
    trainer runs from there), else absolute."""
    folder = Path(folder).resolve()
    try:
        return str(folder.relative_to(root.resolve()))
    except ValueError:
        return str(folder)


def run_datasets(runs_dir: Path, root: Path = ROOT) -> list[tuple[str, str, Path | None]]:
    """(run name, data.path as written, resolved folder or None) for every run; only data.path is
    read (yaml.safe_load), so a run whose config no longer validates still shows its dataset."""
    out = []
    for run in list_runs(runs_dir):
        value = _data_path_of(run.config_path) or ""
        folder = (root / os.path.expanduser(value)).resolve() if value else None
        out.append((run.name, value, folder))
    return out


_DATA_PATHS = SignatureCache(256)   # config.yaml -> its data.path, until the file changes


def _data_path_of(config_path: Path) -> str | None:
    """data.path of a run's config.yaml (cached until the file changes), None if unreadable."""
    try:
        mtime = config_path.stat().st_mtime_ns
    except OSError:
        return None
    return _DATA_PATHS.get(str(config_path), mtime, lambda _stale: _read_data_path(config_path))


def _read_data_path(config_path: Path) -> str | None:
    try:
        doc = yaml.safe_load(config_path.read_text(encoding="utf-8"))
        value = doc.get("data", {}).get("path") if isinstance(doc, dict) else None
    except (OSError, UnicodeDecodeError, yaml.YAMLError, AttributeError):
        value = None
    return value if isinstance(value, str) and value else None


def usage_by_dataset(datasets: Iterable[DatasetInfo],
                     runs: Iterable[tuple[str, str, Path | None]]) -> dict[str, list[str]]:
    """Dataset name -> the runs whose data.path is that folder."""
    by_path = {d.path.resolve(): d.name for d in datasets}
    out: dict[str, list[str]] = {}
    for run, _text, folder in runs:
        if folder is not None and folder in by_path:
            out.setdefault(by_path[folder], []).append(run)
    return out


# -- preview -------------------------------------------------------------------------------------
def escape_text(data: bytes) -> str:
    """Bytes as readable text: UTF-8 decoded, newlines and tabs kept, every other control or
    non-printable character escaped (\\x1b, \\u200b) and invalid bytes as \\xNN."""
    text = data.decode("utf-8", errors="backslashreplace")
    out = []
    for ch in text:
        if ch in "\n\t" or (ch.isprintable() and unicodedata.category(ch) != "Co"):
            out.append(ch)
        elif ord(ch) < 0x100:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(f"\\u{ord(ch):04x}")
    return "".join(out)


def preview_sample(folder: Path, n_bytes: int = PREVIEW_BYTES) -> tuple[str, str]:
    """(which file, escaped text) of the first n_bytes of val.bin (train.bin if val is empty)."""
    for split in ("val", "train"):
        path = bin_path(folder, split)
        try:
            with open(path, "rb") as fh:
                data = fh.read(n_bytes)
        except OSError:
            continue
        if data:
            return path.name, escape_text(data)
    return "", ""


def _split_label(entry: dict) -> str:
    """'train', or 'val (bytes 1,900,000..2,000,000)' for a byte range of a single-file corpus."""
    split, rng = str(entry.get("split", "?")), entry.get("range")
    if isinstance(rng, list) and len(rng) == 2:
        return f"{split} (bytes {int(rng[0]):,}..{int(rng[1]):,})"
    return split


def file_list(folder: Path, limit: int = MAX_FILES_SHOWN) -> tuple[list[dict], int]:
    """(up to `limit` rows of {path, bytes, split}, total number of files) from dataset.json."""
    try:
        files = read_record(folder)["files"]
        rows = [{"path": str(f.get("path", "?")), "bytes": int(f.get("bytes", 0)),
                 "split": _split_label(f)} for f in files if isinstance(f, dict)]
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError):
        return [], 0
    return rows[:limit], len(rows)


# -- building --------------------------------------------------------------------------------------
class BuildError(ValueError):
    """A dataset build cannot start; the message says why and what to do."""


_WEIGHT = re.compile(r"\s@\s*([0-9]*\.?[0-9]+)\s*$")    # "~/code @3": the source's weight


def parse_weighted_sources(text: str | None, base: Path | None = None
                           ) -> tuple[list[Path], list[float] | None]:
    """One path per line (blank lines and #comments skipped), ~ expanded, relative paths
    against `base` (default: the cockpit's working directory); every one must exist. A line may
    end with ` @W`, the source's weight (bin.prepare_data --weight); weights: None when no line
    has one, else one per source (1 where not given)."""
    paths, weights, missing = [], [], []
    for line in (text or "").splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if "\x00" in line:
            raise BuildError("a source path contains a NUL character")
        m = _WEIGHT.search(line)
        weight = float(m.group(1)) if m else None
        line = line[:m.start()].strip() if m else line
        p = Path(os.path.expanduser(line))
        p = p if p.is_absolute() else (base or Path.cwd()) / p
        if p.exists():
            paths.append(p)
            weights.append(weight)
        else:
            missing.append(p)
    if missing:
        raise BuildError("source does not exist: " + ", ".join(str(p) for p in missing[:3]))
    if all(w is None for w in weights):
        return paths, None
    return paths, [1.0 if w is None else w for w in weights]


def build_command(out: Path, sources: list[Path], val_fraction: float, max_bytes: int,
                  python: str = sys.executable,
                  weights: list[float] | None = None) -> list[str]:
    argv = [python, "-m", "bin.prepare_data"]
    for i, s in enumerate(sources):
        argv += ["--source", str(s)] + (["--weight", f"{weights[i]:g}"] if weights else [])
    return argv + ["--out", str(out), "--val-fraction", f"{val_fraction:g}",
                   "--max-bytes", str(int(max_bytes))]


@dataclass
class BuildJob:
    """One prepare_data process started by this cockpit."""

    name: str
    out: Path
    argv: list[str]
    proc: subprocess.Popen
    log: IO | None = None
    started: float = field(default_factory=time.time)
    exit_code: int | None = None
    ended: float | None = None
    cancelled: bool = False
    done: threading.Event = field(default_factory=threading.Event)
    child: Child | None = field(default=None, repr=False)  # the supervisor's handle

    @property
    def alive(self) -> bool:
        return not self.done.is_set()

    @property
    def log_path(self) -> Path:
        return self.out / BUILD_LOG

    def tail(self, n: int = 40, max_bytes: int = 64 * 1024) -> str:
        """The last n lines of the process's output."""
        try:
            with open(self.log_path, "rb") as fh:
                fh.seek(0, os.SEEK_END)
                fh.seek(max(0, fh.tell() - max_bytes))
                text = fh.read().decode("utf-8", errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-n:])

    def outcome(self) -> tuple[str, str]:
        """(level, sentence): level is running | ok | failed."""
        if self.alive:
            return "running", (f"Building {self.name} (pid {self.proc.pid}, "
                               f"{time.time() - self.started:.0f} s)...")
        last = last_output_line(self.log_path)
        if self.exit_code == 0:
            return "ok", f"Built {self.name}" + (f": {last}" if last else ".")
        if self.cancelled:
            return "failed", f"Cancelled: {self.name} was not built ({describe_exit(self.exit_code)})."
        why = last if last and self.exit_code is not None and self.exit_code > 0 else \
            describe_exit(self.exit_code if self.exit_code is not None else -1)
        return "failed", f"Failed to build {self.name} (exit code {self.exit_code}): {why}"


class DatasetBuilder:
    """prepare_data processes started by one cockpit, keyed by dataset name (thread-safe)."""

    def __init__(self, data_dir: Path, root: Path = ROOT, python: str = sys.executable,
                 supervisor: Supervisor | None = None):
        self.data_dir, self.root, self.python = Path(data_dir), Path(root), python
        self.supervisor = supervisor or Supervisor()
        self._lock = threading.Lock()
        self._jobs: dict[str, BuildJob] = {}

    def get(self, name: str | None) -> BuildJob | None:
        with self._lock:
            return self._jobs.get(name) if name else None

    def building(self) -> set[str]:
        with self._lock:
            return {n for n, j in self._jobs.items() if j.alive}

    def start(self, name: str | None, sources_text: str | None, val_fraction=0.05,
              max_bytes=16_000_000, base: Path | None = None) -> BuildJob:
        """Check the inputs, claim <data_dir>/<sanitised name> and start prepare_data on it."""
        clean = sanitise_name(name)
        if not clean:
            raise BuildError("give the dataset a name (letters, digits, '.', '_', '-')")
        val_fraction, max_bytes = _check_numbers(val_fraction, max_bytes)
        sources, weights = parse_weighted_sources(sources_text, base)
        out = self.data_dir / clean
        try:
            self.data_dir.mkdir(parents=True, exist_ok=True)
            out.mkdir()
        except FileExistsError:
            raise BuildError(f"{out} already exists; choose another name (datasets are never "
                             "overwritten)") from None
        except OSError as exc:
            raise BuildError(f"cannot create {out}: {exc.strerror or exc}") from None
        argv = build_command(out, sources, val_fraction, max_bytes, self.python, weights)
        notes = () if sources else ("no sources given: the default corpus (Python standard "
                                    "library sources and docs)",)
        try:
            child = self.supervisor.start(argv, name=f"dataset-{clean}", cwd=self.root,
                                          log_path=out / BUILD_LOG, notes=notes)
        except SpawnError as exc:
            raise BuildError(str(exc)) from None  # cannot write <out>/prepare.log | start argv[0]
        job = BuildJob(clean, out, argv, child.proc, child.log, child=child)
        with self._lock:
            self._jobs[clean] = job
        child.add_exit_callback(lambda c: self._ended(job, c))
        return job

    @staticmethod
    def _ended(job: BuildJob, child: Child) -> None:
        job.exit_code, job.ended = child.exit_code, child.ended
        job.done.set()

    def cancel(self, name: str | None) -> str:
        """SIGTERM the build's process group (SIGKILL if it is still there after the grace)."""
        job = self.get(name)
        if job is None or not job.alive:
            return "Nothing is being built."
        job.cancelled = True
        if job.child is not None:
            job.child.cancel()
        return f"Cancelling the build of {job.name}..."


def _check_numbers(val_fraction, max_bytes) -> tuple[float, int]:
    try:
        vf = float(val_fraction)
        mb = int(max_bytes)
    except (TypeError, ValueError):
        raise BuildError("validation fraction and max bytes must be numbers") from None
    if not 0.0 < vf < 0.5:
        raise BuildError(f"validation fraction {vf:g} must be between 0 and 0.5")
    if mb < 1024:
        raise BuildError(f"max bytes {mb:,} must be at least 1,024")
    return vf, mb
