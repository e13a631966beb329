"""status.json and the honest state derived from it."""
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from umoec.run import RunDir, RunState, RunStatus, effective_state, pid_alive
from umoec.run.status import own_process_start


def me(**kw) -> RunStatus:
    return RunStatus(state="running", pid=os.getpid(), proc_start=own_process_start(), **kw)


def test_running_with_fresh_heartbeat_is_running():
    assert effective_state(me(step=5, total_steps=10))[0] is RunState.RUNNING


def test_old_heartbeat_is_stalled():
    state, detail = effective_state(me(), now=time.time() + 60)
    assert state is RunState.STALLED and "no heartbeat for 60 s" in detail


def test_a_long_step_of_a_working_process_is_a_slow_step_not_a_stall():
    now = time.time()
    slow = me(step=5, total_steps=10, updated_at=now - 1, step_at=now - 100, busy_at=now - 1)
    state, detail = effective_state(slow, now=now)
    assert state is RunState.RUNNING
    assert detail == "slow step: step 6 has run for 100 s, the process is working"
    idle = me(step=5, total_steps=10, updated_at=now - 1, step_at=now - 100, busy_at=now - 40)
    state, detail = effective_state(idle, now=now)
    assert state is RunState.STALLED
    assert detail == "alive but idle: no step and no CPU work for 40 s (last step 5)"
    # files of older versions (no step_at): the heartbeat's age alone, as before
    assert effective_state(me(step=5, total_steps=10, updated_at=now - 1), now=now)[0] \
        is RunState.RUNNING


def test_the_heartbeat_thread_beats_through_a_long_step(tmp_path, monkeypatch):
    """Status.json stays fresh while one step runs for many heartbeat periods; the process's
    CPU work shows in busy_at; nothing is written after the final status."""
    from umoec import config as C
    from umoec.run import recorder as R
    monkeypatch.setattr(R, "HEARTBEAT_S", 0.1)
    run = RunDir(tmp_path / "r")
    rec = R.RunRecorder(run, C.load(Path(__file__).parents[3] / "configs" / "tier1_micro.yaml"), 10)
    rec.start()
    rec.heartbeat(1, force=True)
    first = run.read_status()
    end = time.monotonic() + 1.0
    while time.monotonic() < end:  # a "step" that computes for 10 heartbeat periods
        sum(i * i for i in range(10_000))
    during = run.read_status()
    assert during.step == 1 and during.step_at == first.step_at
    assert during.updated_at > first.updated_at + 0.5 and during.busy_at > first.updated_at + 0.5
    state, detail = effective_state(during, now=during.updated_at, stall_after_s=0.5)
    assert state is RunState.RUNNING and detail.startswith("slow step: step 2 has run for")
    rec.finish(RunState.COMPLETED, "done")
    final = run.status_path.read_bytes()
    time.sleep(0.3)
    assert run.status_path.read_bytes() == final and run.read_status().state == "completed"


def test_dead_process_is_crashed():
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    state, detail = effective_state(RunStatus(state="running", pid=proc.pid, step=7))
    assert state is RunState.CRASHED and "last step 7" in detail


def test_reused_pid_does_not_count_as_alive():
    assert pid_alive(os.getpid())
    assert not pid_alive(os.getpid(), own_process_start() - 100)


def test_crashed_shows_exit_code():
    state, detail = effective_state(RunStatus(state="crashed", exit_code=3, message="boom"))
    assert state is RunState.CRASHED and detail == "exit code 3: boom"


def test_missing_status_is_reported():
    assert effective_state(None)[0] is RunState.CRASHED


def test_write_read_round_trip_and_damaged_file(tmp_path):
    run = RunDir(tmp_path)
    assert run.read_status() is None
    s = me(step=3, total_steps=9, message="hi")
    run.write_status(s)
    assert run.read_status() == s
    run.status_path.write_text("{not json")
    with pytest.raises(ValueError, match="unreadable"):
        run.read_status()


def test_a_sigterm_while_starting_is_held_for_the_step_loop():
    """catch_early (the entry points' first act) holds a SIGTERM that arrives before the step loop
    exists; the loop's StopFlag then starts out stopped (checkpoint, status `stopped`)."""
    import os
    import signal

    from umoec.run import signals
    before = signal.getsignal(signal.SIGTERM)
    try:
        signals.catch_early()
        os.kill(os.getpid(), signal.SIGTERM)
        with signals.StopFlag() as stop:
            assert stop.signal == signal.SIGTERM
    finally:
        signal.signal(signal.SIGTERM, before)
        signals._early = None
