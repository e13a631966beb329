"""status.json and the honest state derived from it."""
import os
import subprocess
import sys
import time

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
