"""Run notifications and the watchdog's rules (no Dash here).

- `snapshot(runs_dir)`: every run's honest state (`umoec.run.effective_state`: stalled, crashed...).
- `transitions(previous, current)`: the events between two snapshots (completed, crashed,
  stalled, stopped, running again after a stall); no previous snapshot only records a baseline.
- `reconcile_dead_runs(runs_dir)`: a status.json that says running while its process (on this
  host) is gone is rewritten as crashed, its last step kept; runs the cockpit launched are left
  to gui/services/launcher.py, which records the real exit code.
"""
from __future__ import annotations

import socket
import time
from collections.abc import Callable

from umoec.run import RunDir, RunState, effective_state, pid_alive
from umoec.run.layout import list_runs
from umoec.run.status import STALL_AFTER_S

GONE_WHILE_CLOSED = "process gone while the cockpit was not running"
GONE_UNWATCHED = ("process {pid} is gone without a final status (last step {step}; not started "
                  "by this cockpit, so its exit code is unknown)")
MAX_EVENTS = 6

# state -> (toast colour, title verb, desktop notification?)
EVENT_KINDS = {
    RunState.COMPLETED.value: ("success", "completed", True),
    RunState.CRASHED.value: ("danger", "crashed", True),
    RunState.STALLED.value: ("warning", "stalled", True),
    RunState.STOPPED.value: ("secondary", "stopped", False),
    "recovered": ("info", "is running again", False),
}


# -- watchdog ------------------------------------------------------------------------------------
def _running(run: RunDir, host: str | None = None):
    """The run's status when it says running (on `host` when given), else None (unreadable: its
    effective state is already "crashed" with the reason)."""
    try:
        status = run.read_status()
    except ValueError:
        return None
    if status is None or status.state != RunState.RUNNING.value or host not in (None, status.host):
        return None
    return status


def reconcile_dead_runs(runs_dir, message: str = GONE_WHILE_CLOSED,
                        skip: Callable[[str], bool] | None = None) -> list[str]:
    """Rewrite 'running' statuses whose process is gone (this host only) as crashed, with
    `message` ({pid} and {step} filled in) and the last step kept; returns the names rewritten.
    `skip(name)` True leaves a run alone (processes this cockpit's Launcher watches)."""
    host = socket.gethostname()
    fixed = []
    for run in list_runs(runs_dir):
        if skip is not None and skip(run.name):
            continue
        status = _running(run, host)
        if status is None or pid_alive(status.pid, status.proc_start):
            continue
        # The process is gone, so nobody else writes this file now: re-read it, to never
        # overwrite a final status written between the first read and the pid check.
        status = _running(run)
        if status is None:
            continue
        status.state = RunState.CRASHED.value
        status.message = message.format(pid=status.pid, step=status.step)
        status.updated_at = time.time()
        try:
            run.write_status(status)
        except OSError:
            continue  # read-only folder: effective_state still shows it crashed
        fixed.append(run.name)
    return fixed


# -- snapshots and transitions -------------------------------------------------------------------
def snapshot(runs_dir, now: float | None = None,
             stall_after_s: float = STALL_AFTER_S) -> dict[str, dict]:
    """The honest state of every run folder in runs_dir."""
    now = time.time() if now is None else now
    return {run.name: run_entry(run, now, stall_after_s) for run in list_runs(runs_dir)}


def run_entry(run: RunDir, now: float, stall_after_s: float = STALL_AFTER_S) -> dict:
    try:
        status = run.read_status()
    except ValueError as exc:
        return {"state": RunState.CRASHED.value, "step": 0, "detail": str(exc), "at": 0.0}
    state, detail = effective_state(status, now, stall_after_s)
    return {"state": state.value, "step": status.step if status else 0, "detail": detail,
            "at": status.updated_at if status else 0.0}


def transitions(previous: dict | None, current: dict[str, dict]) -> list[dict]:
    """Events between two snapshots. `previous` is {"runs": snapshot, "at": time} or None
    (first visit: no events). Each event: run, state, colour, title, body, notify, key."""
    if not isinstance(previous, dict) or not isinstance(previous.get("runs"), dict):
        return []
    before, since = previous["runs"], float(previous.get("at") or 0.0)
    events = []
    for name, cur in current.items():
        state = cur.get("state")
        running = state == RunState.RUNNING.value
        old = before.get(name)
        old_state = old.get("state") if isinstance(old, dict) else None
        if old_state is None:  # new since the last look: only news if it already ended
            news = not running and float(cur.get("at") or 0.0) > since
        else:  # started or resumed: the user did that, no toast (but the end of a stall is news)
            news = old_state != state and (not running or old_state == RunState.STALLED.value)
        kind = "recovered" if running else state
        if news and kind in EVENT_KINDS:
            events.append(make_event(name, kind, cur))
    return events


def make_event(name: str, kind: str, cur: dict) -> dict:
    colour, verb, notify = EVENT_KINDS[kind]
    step = cur.get("step") or 0
    body = cur.get("detail") or kind   # a stall's detail says what stopped and for how long
    return {"run": name, "state": kind, "colour": colour, "title": f"{name} {verb}",
            "body": f"{body} - step {step:,}" if step and "step" not in body else body,
            "notify": notify, "key": f"{name}:{kind}:{cur.get('at')}"}


def stored(current: dict[str, dict], now: float | None = None) -> dict:
    """What the page keeps for the next comparison (states only: small, and no text)."""
    return {"runs": {n: {"state": c["state"], "at": c.get("at")} for n, c in current.items()},
            "at": time.time() if now is None else now}
