"""Notifications and watchdog (gui/services/notify.py, gui/pages/notifications/callbacks.py) without a
browser: which state changes are news, no repeats across ticks or reloads, stalls after 30 s, and
runs that died while no cockpit watched are rewritten as crashed at the next start."""
import os
import socket
import time

import pytest

from gui.pages.notifications import callbacks as cb
from gui.services import notify as N
from gui.services.launcher import Launcher
from gui.services.watchdog import RunWatchdog
from umoec.run import RunDir, RunState, RunStatus
from umoec.run.status import own_process_start

NOW = 1_000_000.0


def snap(**states) -> dict:
    return {name: {"state": s, "step": 7, "detail": s, "at": NOW} for name, s in states.items()}


def seen(at=NOW - 10, **states) -> dict:
    return {"runs": {n: {"state": s, "at": NOW - 20} for n, s in states.items()}, "at": at}


def test_first_look_only_records_a_baseline():
    assert N.transitions(None, snap(a="crashed", b="running")) == []
    assert N.transitions({"junk": 1}, snap(a="crashed")) == []


@pytest.mark.parametrize("before, after, colour, notify", [
    ("running", "completed", "success", True),
    ("running", "crashed", "danger", True),
    ("running", "stalled", "warning", True),
    ("stalled", "crashed", "danger", True),
    ("running", "stopped", "secondary", False),
    ("stalled", "running", "info", False),
])
def test_state_changes_that_are_news(before, after, colour, notify):
    [e] = N.transitions(seen(r=before), snap(r=after))
    assert (e["run"], e["colour"], e["notify"]) == ("r", colour, notify)
    assert e["title"].startswith("r ") and e["key"].startswith(f"r:{e['state']}:")


@pytest.mark.parametrize("before, after", [
    ("running", "running"), ("crashed", "running"), ("stopped", "running"),
    ("completed", "completed"), (None, "running"),
])
def test_changes_that_are_not_news(before, after):
    prev = seen(r=before) if before else seen()
    assert N.transitions(prev, snap(r=after)) == []


def test_a_run_that_ended_between_two_looks_is_reported():
    cur = snap(new="crashed")
    assert [e["run"] for e in N.transitions(seen(at=NOW - 5), cur)] == ["new"]
    assert N.transitions(seen(at=NOW + 5), cur) == []  # ended before the last look: old news


def test_stall_message_says_it_once():
    cur = snap(r="stalled")
    cur["r"]["detail"] = "no heartbeat for 32 s (last step 0)"
    [e] = N.transitions(seen(r="running"), cur)
    assert e["body"] == "no heartbeat for 32 s (last step 0)"


# -- against real run folders ------------------------------------------------------------------------
def write_status(root, state="running", **kw) -> RunDir:
    run = RunDir(root)
    root.mkdir(parents=True, exist_ok=True)
    defaults = dict(pid=os.getpid(), proc_start=own_process_start(), step=42, total_steps=100)
    run.write_status(RunStatus(state=state, **{**defaults, **kw}))
    return run


def test_snapshot_sees_stalls_after_30_s(tmp_path):
    write_status(tmp_path / "fresh")
    write_status(tmp_path / "quiet", updated_at=time.time() - 45)
    states = {n: r["state"] for n, r in N.snapshot(tmp_path).items()}
    assert states == {"fresh": "running", "quiet": "stalled"}


def test_reconcile_rewrites_only_dead_running_runs(tmp_path):
    dead = write_status(tmp_path / "dead", proc_start=1.0)   # our pid, other start time: gone
    live = write_status(tmp_path / "live")
    done = write_status(tmp_path / "done", state="completed", proc_start=1.0)
    remote = write_status(tmp_path / "remote", proc_start=1.0, host=socket.gethostname() + "-x")
    watched = write_status(tmp_path / "watched", proc_start=1.0)
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "status.json").write_text("{oops")
    fixed = N.reconcile_dead_runs(tmp_path, skip=lambda name: name == "watched")
    assert fixed == ["dead"]
    s = dead.read_status()
    assert s.state == "crashed" and s.message == N.GONE_WHILE_CLOSED and s.step == 42
    assert s.exit_code is None
    for run, state in ((live, "running"), (done, "completed"), (remote, "running"),
                       (watched, "running")):
        assert run.read_status().state == state
    assert N.reconcile_dead_runs(tmp_path) == ["watched"]  # not skipped any more
    assert N.reconcile_dead_runs(tmp_path) == []           # idempotent


def test_cockpit_start_marks_runs_that_died_while_it_was_closed(tmp_path):
    from gui.app import create_app
    run = write_status(tmp_path / "orphan", proc_start=1.0, step=1234)
    create_app(tmp_path, data_dir=tmp_path / "data")
    s = run.read_status()
    assert (s.state, s.message, s.step) == ("crashed", N.GONE_WHILE_CLOSED, 1234)
    from gui.services.runs import summarise
    assert summarise(run).label == f"Crashed ({N.GONE_WHILE_CLOSED})"


def watched(runs_dir, launcher) -> dict:
    """One watchdog pass, as the app's thread makes every 2 s; returns its snapshot."""
    watchdog = RunWatchdog(runs_dir, launcher)
    watchdog.check()
    return watchdog.current()[1]


def test_ticks_toast_once_and_never_again_after_a_reload(tmp_path):
    launcher = Launcher(tmp_path)
    run = write_status(tmp_path / "r")
    first = cb.tick(watched(tmp_path, launcher), None, [])
    assert first["toasts"] is cb.no_update and first["seen"]["runs"]["r"]["state"] == "running"
    stored = first["seen"]

    run.write_status(RunStatus(state="crashed", pid=os.getpid(), step=50, exit_code=1,
                               message="loss is NaN at step 50"))
    second = cb.tick(watched(tmp_path, launcher), stored, [])
    [t] = second["toasts"]
    assert t.header == "r crashed" and "loss is NaN" in t.children.children
    assert t.duration is None  # a crash stays until dismissed
    assert second["events"]["items"][0]["notify"] is True
    # the next tick, and a reload (same localStorage), see nothing new
    third = cb.tick(watched(tmp_path, launcher), second["seen"], second["toasts"])
    assert third["toasts"] is cb.no_update and third["seen"] is cb.no_update


def test_watchdog_marks_an_unwatched_dead_run_crashed_but_leaves_the_launchers(tmp_path):
    unwatched = write_status(tmp_path / "external", proc_start=1.0, pid=os.getpid())
    ours = write_status(tmp_path / "ours", proc_start=1.0)
    launcher = Launcher(tmp_path)
    launcher._runs["ours"] = object()  # as if this cockpit had launched it: its watcher decides
    watched(tmp_path, launcher)
    s = unwatched.read_status()
    assert s.state == "crashed" and f"process {os.getpid()} is gone without a final status" in s.message
    assert "not started by this cockpit" in s.message and s.step == 42
    assert ours.read_status().state == "running"


def test_closed_toasts_are_dropped_and_the_list_is_capped():
    old = [{"props": {"is_open": False}}, {"props": {"is_open": True}, "type": "Toast"}]
    assert [cb._is_open(t) for t in old] == [False, True]
    events = [N.make_event(f"r{i}", RunState.COMPLETED.value, {"step": 1, "detail": "done",
                                                                "at": i}) for i in range(3)]
    toasts = [cb.toast(e) for e in events]
    assert len({t.id for t in toasts}) == 3 and all(t.duration == cb.TOAST_MS for t in toasts)
