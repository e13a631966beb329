"""Run folders as the cockpit sees them: which runs exist and what state each is honestly in."""
from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from umoec.run import RunDir, RunState, effective_state
from umoec.run.layout import list_runs

BADGE_COLOURS = {RunState.RUNNING: "primary", RunState.COMPLETED: "success",
                 RunState.STOPPED: "secondary", RunState.CRASHED: "danger",
                 RunState.STALLED: "warning"}


@dataclass(frozen=True)
class RunSummary:
    name: str
    path: Path
    state: RunState
    detail: str
    step: int
    total_steps: int
    kind: str

    @property
    def label(self) -> str:
        """What the status badge says, e.g. 'Crashed (exit code 1)'."""
        text = self.state.value.capitalize()
        return f"{text} ({self.detail})" if self.detail else text

    @property
    def colour(self) -> str:
        return BADGE_COLOURS[self.state]


def summarise(run: RunDir, now: Optional[float] = None) -> RunSummary:
    try:
        status = run.read_status()
    except ValueError as exc:
        return RunSummary(run.name, run.root, RunState.CRASHED, str(exc), 0, 0, "?")
    state, detail = effective_state(status, time.time() if now is None else now)
    return RunSummary(run.name, run.root, state, detail, status.step if status else 0,
                      status.total_steps if status else 0, status.kind if status else "?")


def run_options(runs_dir: Path) -> list[dict]:
    """Dropdown options, newest run first, each labelled with its state."""
    out = []
    for run in list_runs(runs_dir):
        s = summarise(run)
        kind = " (simulated)" if s.kind == "simulate" else ""
        out.append({"label": f"{run.name}{kind} - {s.state.value}", "value": run.name})
    from .forge import forge_options  # Forge run folders, read-only
    return out + forge_options(runs_dir)


def resolve(runs_dir: Path, name: Optional[str]) -> Optional[RunDir]:
    """The run folder called `name` directly inside runs_dir (never a path outside it)."""
    if not name or "/" in name or "\\" in name or name in (".", ".."):
        return None
    run = RunDir(Path(runs_dir) / name)
    return run if run.exists() else None
