"""Run folders as the cockpit sees them: which runs exist and what state each is honestly in."""
from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from umoec.run import RunDir, RunState, effective_state
from umoec.run.layout import list_runs

BADGE_COLOURS = {RunState.RUNNING: "primary", RunState.COMPLETED: "success",
                 RunState.STOPPED: "secondary", RunState.CRASHED: "danger", RunState.STALLED: "warning"}
ACTIVE = (RunState.RUNNING, RunState.STALLED)   # a process is (or should be) working on the run


@dataclass(frozen=True)
class RunSummary:
    name: str
    path: Path
    state: RunState
    detail: str
    step: int
    total_steps: int
    kind: str
    resuming: bool = False   # resumed here: the old final status is on disk until the new first

    @property
    def label(self) -> str:
        """What the status badge says, e.g. 'Crashed (exit code 1)'."""
        text = "Resuming" if self.resuming else self.state.value.capitalize()
        return f"{text} ({self.detail})" if self.detail else text

    @property
    def colour(self) -> str:
        return BADGE_COLOURS[self.state]

    @property
    def simulated(self) -> bool:
        """Written by bin.simulate_training: its checkpoints hold no weights."""
        return self.kind == "simulate"


def summarise(run: RunDir, now: float | None = None, launched: Any = None) -> RunSummary:
    """The run's honest state. With `launched` (the Launcher's entry), a process started after the
    status file was written while it still holds a final state is *resuming*, not "Completed"."""
    try:
        status = run.read_status()
    except ValueError as exc:
        return RunSummary(run.name, run.root, RunState.CRASHED, str(exc), 0, 0, "?")
    state, detail = effective_state(status, time.time() if now is None else now)
    summary = RunSummary(run.name, run.root, state, detail, status.step if status else 0,
                         status.total_steps if status else 0, status.kind if status else "?")
    if (launched is not None and launched.alive and state not in ACTIVE
            and status_time(run) < launched.started):
        return dataclasses.replace(summary, state=RunState.RUNNING, resuming=True,
                                   detail=f"process {launched.pid} started, waiting for its "
                                          "first status")
    return summary


def status_time(run: RunDir) -> float:
    """When the run's status file was last written (0 when there is none)."""
    try:
        return run.status_path.stat().st_mtime
    except OSError:
        return 0.0


def run_options(runs_dir: Path) -> list[dict]:
    """Dropdown options, newest run first, each labelled with its state."""
    out = []
    for run in list_runs(runs_dir):
        s = summarise(run)
        kind = " (simulated)" if s.simulated else ""
        out.append({"label": f"{run.name}{kind} - {s.state.value}", "value": run.name})
    from .forge import forge_options
    return out + forge_options(runs_dir)


def run_list(runs_dir: Path, launcher=None) -> list[dict]:
    """run_options, then the runs `launcher` started that have no status.json yet."""
    options = run_options(runs_dir)
    if launcher is not None:
        known = {o["value"] for o in options}
        options += [{"label": f"{n} - starting", "value": n} for n in launcher.pending() if n not in known]
    return options


def resolve(runs_dir: Path, name: str | None) -> RunDir | None:
    """The run folder called `name` directly inside runs_dir (never a path outside it)."""
    if not name or "/" in name or "\\" in name or name in (".", ".."):
        return None
    run = RunDir(Path(runs_dir) / name)
    return run if run.exists() else None
