"""Where everything of one run lives (CONTRACTS.md "A run folder").

Written by the run:     config.yaml, metrics.db, training.log, log.csv, status.json,
                        checkpoints/stepNNNNNN.pt
Written by the cockpit: launch.yaml, launch.json, process.log (a run it started), notes.md,
                        compressed/ (job-NNNNNN.json sidecars and the .umc outputs of its
                        compression jobs), models/stepNNNNNN.umm (checkpoints exported to coding
                        models; bin tools and compress_path export there too)
Every file name of a run folder is spelled here and nowhere else.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from .status import RunStatus

CHECKPOINT_RE = re.compile(r"^step(\d{6,})\.pt$")


@dataclass(frozen=True)
class Checkpoint:
    step: int
    path: Path
    size: int
    mtime: float


class RunDir:
    """Paths and small helpers for one run folder; creates nothing until asked."""

    def __init__(self, root: str | os.PathLike):
        self.root = Path(root)

    def __repr__(self) -> str:
        return f"RunDir({str(self.root)!r})"

    @property
    def name(self) -> str:
        return self.root.name

    @property
    def config_path(self) -> Path:
        return self.root / "config.yaml"

    @property
    def db_path(self) -> Path:
        return self.root / "metrics.db"

    @property
    def log_path(self) -> Path:
        return self.root / "training.log"

    @property
    def csv_path(self) -> Path:
        return self.root / "log.csv"

    @property
    def status_path(self) -> Path:
        return self.root / "status.json"

    @property
    def checkpoints_dir(self) -> Path:
        return self.root / "checkpoints"

    def checkpoint_path(self, step: int) -> Path:
        return self.checkpoints_dir / f"step{step:06d}.pt"

    @property
    def models_dir(self) -> Path:
        """Coding models exported from this run's checkpoints (on the model search path)."""
        return self.root / "models"

    def model_path(self, step: int) -> Path:
        return self.models_dir / f"step{step:06d}.umm"

    # -- files the cockpit writes (gui/) ----------------------------------------------------
    @property
    def launch_config_path(self) -> Path:
        """The config the cockpit froze at Start and passed to the process (the run then
        writes its own config.yaml)."""
        return self.root / "launch.yaml"

    @property
    def launch_info_path(self) -> Path:
        """How the cockpit started the process: argv, runner, pid, start time, cockpit pid."""
        return self.root / "launch.json"

    @property
    def process_log_path(self) -> Path:
        """stdout + stderr of a process the cockpit started (appended to on resume)."""
        return self.root / "process.log"

    @property
    def notes_path(self) -> Path:
        """The user's notes on the run (Runs tab)."""
        return self.root / "notes.md"

    @property
    def compressed_dir(self) -> Path:
        """Outputs and sidecars of the cockpit's compression jobs on this run."""
        return self.root / "compressed"

    def job_sidecar_path(self, job_id: int) -> Path:
        """What a compression job (compression_jobs.job_id) asked for and got, beside its row."""
        return self.compressed_dir / f"job-{job_id:06d}.json"

    def compressed_output_path(self, stamp: str, name: str, attempt: int = 1) -> Path:
        """A compression job's .umc output: STAMP-NAME.umc, or STAMP-N-NAME.umc for the Nth
        candidate when that name is taken."""
        return self.compressed_dir / (f"{stamp}-{name}.umc" if attempt == 1
                                      else f"{stamp}-{attempt}-{name}.umc")

    def exists(self) -> bool:
        """A run folder is one that holds a config or a status file."""
        return self.config_path.exists() or self.status_path.exists()

    def checkpoints(self) -> list[Checkpoint]:
        """Checkpoints sorted by step (temp files of interrupted writes are ignored)."""
        out = []
        try:
            entries = list(os.scandir(self.checkpoints_dir))
        except (FileNotFoundError, NotADirectoryError):
            return []
        for entry in entries:
            m = CHECKPOINT_RE.match(entry.name)
            if m and entry.is_file():
                st = entry.stat()
                out.append(Checkpoint(int(m.group(1)), Path(entry.path), st.st_size, st.st_mtime))
        return sorted(out, key=lambda c: c.step)

    def remove_stale_temp_files(self) -> int:
        """Delete temp files of interrupted atomic writes (call only when no writer runs)."""
        n = 0
        for folder in (self.root, self.checkpoints_dir):
            for tmp in folder.glob(".*.tmp") if folder.is_dir() else ():
                try:
                    tmp.unlink()
                    n += 1
                except OSError:
                    pass
        return n

    def latest_checkpoint(self) -> Checkpoint | None:
        cks = self.checkpoints()
        return cks[-1] if cks else None

    def read_status(self) -> RunStatus | None:
        return RunStatus.read(self.status_path)

    def write_status(self, status: RunStatus) -> None:
        status.write(self.status_path)

    def tail_log(self, n: int = 100, max_bytes: int = 256 * 1024) -> list[str]:
        """The last `n` lines of training.log, reading at most `max_bytes` from its end."""
        try:
            with open(self.log_path, "rb") as fh:
                fh.seek(0, os.SEEK_END)
                size = fh.tell()
                fh.seek(max(0, size - max_bytes))
                data = fh.read()
        except FileNotFoundError:
            return []
        lines = data.decode("utf-8", errors="replace").splitlines()
        if size > max_bytes and lines:
            lines = lines[1:]  # first line is probably cut
        return lines[-n:]


def list_runs(runs_dir: str | os.PathLike) -> list[RunDir]:
    """Run folders directly inside `runs_dir`, newest first."""
    root = Path(runs_dir)
    if not root.is_dir():
        return []
    runs = [RunDir(p) for p in root.iterdir() if p.is_dir() and RunDir(p).exists()]

    def mtime(r: RunDir) -> float:
        for p in (r.status_path, r.config_path):
            try:
                return p.stat().st_mtime
            except OSError:
                continue
        return 0.0
    return sorted(runs, key=mtime, reverse=True)
