"""The run watchdog (gui/services/watchdog.py): a server thread that keeps every run's honest
state and marks dead runs crashed with no browser open; its version moves only on news."""
import gc
import os
import time

from gui.services.watchdog import RunWatchdog
from umoec.run import RunDir, RunStatus
from umoec.run.status import own_process_start


def write(folder, **kw) -> RunDir:
    run = RunDir(folder)
    run.root.mkdir(parents=True, exist_ok=True)
    fields = dict(state="running", pid=os.getpid(), proc_start=own_process_start(), step=42,
                  total_steps=1000)
    fields.update(kw)
    run.write_status(RunStatus(**fields))
    return run


def test_version_moves_on_state_step_and_new_runs_only(tmp_path):
    write(tmp_path / "a")
    dog = RunWatchdog(tmp_path)
    v1 = dog.check()
    assert dog.check() == v1                    # nothing new
    version, snap = dog.current()
    assert version == v1 and snap["a"]["state"] == "running"
    write(tmp_path / "a", step=43)              # a step
    v2 = dog.check()
    assert v2 > v1
    write(tmp_path / "b", state="completed")    # a new run
    v3 = dog.check()
    assert v3 > v2
    # a stall's text grows every second ("no heartbeat for N s"); only the state change counts
    later = time.time() + 100
    v4 = dog.check(now=later)
    assert v4 > v3 and dog.current()[1]["a"]["state"] == "stalled"
    assert dog.check(now=later + 5) == v4


def test_the_thread_marks_a_dead_run_crashed_with_no_page_open(tmp_path):
    run = write(tmp_path / "orphan", proc_start=1.0)  # our pid, another start time: gone
    dog = RunWatchdog(tmp_path, period_s=0.05).start()
    try:
        deadline = time.monotonic() + 10
        while run.read_status().state != "crashed" and time.monotonic() < deadline:
            time.sleep(0.05)
        assert run.read_status().state == "crashed"
        assert "not started by this cockpit" in run.read_status().message
    finally:
        dog.stop()
    assert not dog._thread.is_alive()


def test_the_thread_ends_with_its_owner_and_survives_a_missing_folder(tmp_path):
    class Owner:
        pass

    owner = Owner()
    dog = RunWatchdog(tmp_path / "not-yet", period_s=0.05).start(owner=owner)
    assert dog.current()[1] == {}               # no folder: no runs, no error
    time.sleep(0.15)
    assert dog._thread.is_alive()
    del owner
    gc.collect()
    dog._thread.join(5)
    assert not dog._thread.is_alive()
