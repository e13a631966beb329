"""status.json: the heartbeat a running process writes and the cockpit reads.

Written states are running | completed | stopped | crashed. A running process refreshes the file
from a heartbeat thread every few seconds whatever its step length, with the time its step last
advanced (`step_at`) and the last time it used CPU (`busy_at`). Readers derive the honest state
with `effective_state`: a "running" run whose process is gone is crashed; one whose heartbeat is
older than `stall_after_s` is stalled (a frozen or suspended process); one whose step has not
advanced for that long is a slow step while it works, stalled when it is alive but idle (a
deadlock, a collective waiting for a rank that died).
"""
from __future__ import annotations

import json
import os
import socket
import time
from dataclasses import asdict, dataclass, field
from enum import Enum
from pathlib import Path

import psutil

from .atomic import atomic_write_text

STALL_AFTER_S = 30.0


class RunState(str, Enum):
    RUNNING = "running"
    COMPLETED = "completed"
    STOPPED = "stopped"
    CRASHED = "crashed"
    STALLED = "stalled"  # derived only, never written


@dataclass
class RunStatus:
    state: str
    pid: int = 0
    step: int = 0
    total_steps: int = 0
    updated_at: float = field(default_factory=time.time)
    started_at: float = field(default_factory=time.time)
    kind: str = "train"          # train | simulate
    exit_code: int | None = None
    message: str = ""
    host: str = field(default_factory=socket.gethostname)
    proc_start: float | None = None  # process create time, guards against pid reuse
    step_at: float | None = None     # when `step` last advanced (None: files of older versions)
    busy_at: float | None = None     # the last heartbeat that saw the process use CPU

    @classmethod
    def read(cls, path: str | os.PathLike) -> RunStatus | None:
        """The status in `path`, or None if there is none; ValueError if it is unreadable."""
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ValueError(f"{path} is unreadable: {exc}") from None
        if not isinstance(data, dict) or "state" not in data:
            raise ValueError(f"{path} is not a run status file")
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        return cls(**known)

    def write(self, path: str | os.PathLike) -> None:
        atomic_write_text(path, json.dumps(asdict(self), indent=1) + "\n")


def own_process_start() -> float:
    return psutil.Process(os.getpid()).create_time()


def pid_alive(pid: int, proc_start: float | None = None) -> bool:
    """True if `pid` runs (not a zombie) and, when given, started at `proc_start` (+-1 s)."""
    if pid <= 0:
        return False
    try:
        proc = psutil.Process(pid)
        if proc.status() == psutil.STATUS_ZOMBIE:
            return False
        return proc_start is None or abs(proc.create_time() - proc_start) < 1.0
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return False


def effective_state(status: RunStatus | None, now: float | None = None,
                    stall_after_s: float = STALL_AFTER_S) -> tuple[RunState, str]:
    """The honest state of a run and a short explanation, from its status file."""
    if status is None:
        return RunState.CRASHED, "no status file: the run never started or its folder is damaged"
    now = time.time() if now is None else now
    state = RunState(status.state)
    if state is not RunState.RUNNING:
        detail = status.message or state.value
        if state is RunState.CRASHED and status.exit_code is not None:
            detail = f"exit code {status.exit_code}" + (f": {status.message}" if status.message else "")
        return state, detail
    same_host = status.host == socket.gethostname()
    if same_host and not pid_alive(status.pid, status.proc_start):
        return RunState.CRASHED, (f"process {status.pid} is gone without a final status "
                                  f"(last step {status.step})")
    age = now - status.updated_at
    if age > stall_after_s:
        return RunState.STALLED, f"no heartbeat for {age:.0f} s (last step {status.step})"
    waited = now - (status.step_at if status.step_at is not None else status.updated_at)
    if waited > stall_after_s and status.step < status.total_steps:
        idle = now - (status.busy_at if status.busy_at is not None else status.updated_at)
        if idle > stall_after_s:
            return RunState.STALLED, (f"alive but idle: no step and no CPU work for "
                                      f"{min(idle, waited):.0f} s (last step {status.step})")
        return RunState.RUNNING, (f"slow step: step {status.step + 1} has run for {waited:.0f} s, "
                                  f"the process is working")
    return RunState.RUNNING, f"step {status.step}/{status.total_steps}"
