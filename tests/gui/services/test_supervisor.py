"""The supervisor (gui/services/supervisor.py): the one place child processes and worker threads are
started, reaped, timed out and cancelled. Real processes throughout: exit codes, the log header,
pipes, a time limit, SIGTERM then SIGKILL for a child that ignores SIGTERM, its whole process
group, no zombies, and a recycled pid never signalled."""
import os
import shlex
import signal
import subprocess
import sys
import textwrap
import threading
import time

import psutil
import pytest

from gui.services import supervisor as S
from gui.services.supervisor import SpawnError, Supervisor, signal_group
from tests.gui.services import test_launcher as process_tests
from tests.gui.services.test_launcher import no_zombie_children

PY = sys.executable
# ignores SIGTERM, then says so (a signal sent before that would kill it: a race, not a test)
STUBBORN = textwrap.dedent("""
    import signal, time
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    print("ready", flush=True)
    time.sleep(60)
""")


def wait_for(predicate, timeout=15.0, what="condition"):
    """test_process's, with this module's shorter default wait."""
    process_tests.wait_for(predicate, timeout, what)


def lines_of(child_kw: dict):
    """(kwargs for Supervisor.start that collect stdout lines, the list they go to)."""
    got = []
    return {**child_kw, "on_stdout": lambda raw: got.append(raw.decode().strip())}, got


def test_exit_code_log_header_and_one_callback(tmp_path):
    sup = Supervisor()
    log = tmp_path / "out.log"
    argv = [PY, "-c", "import sys; print('hello'); sys.exit(3)"]
    child = sup.start(argv, name="t", cwd=tmp_path, log_path=log, notes=["a note"])
    calls = []
    child.add_exit_callback(calls.append)
    assert child.wait(15)
    assert (child.exit_code, child.state, child.killed, child.timed_out) == (3, "failed", False, False)
    assert child.started <= child.ended and calls == [child] and child.log.closed
    header, note, out = log.read_text().splitlines()
    assert header.startswith("# cockpit: ") and header.endswith(" " + shlex.join(argv))
    assert (note, out) == ("# cockpit: a note", "hello")
    late = []
    child.add_exit_callback(late.append)  # after the end: called at once
    assert late == [child] and sup.live() == []
    wait_for(no_zombie_children, 5, "the child reaped")
    again = sup.start([PY, "-c", "print('more')"], name="t", cwd=tmp_path, log_path=log,
                      log_mode="a")
    assert again.wait(15) and again.state == "done"
    assert log.read_text().splitlines()[-1] == "more" and "hello" in log.read_text()


def test_pipes_give_every_line_before_the_end(tmp_path):
    kw, got = lines_of({"name": "p", "cwd": tmp_path})
    errs = []
    child = Supervisor().start([PY, "-c", "import sys\nfor i in range(500): print(i)\n"
                                "print('oops', file=sys.stderr)"],
                               on_stderr=lambda raw: errs.append(raw), env={"X_SUP": "1"}, **kw)
    seen_at_end = []
    child.add_exit_callback(lambda c: seen_at_end.append(len(got)))
    assert child.wait(15) and child.exit_code == 0
    assert got == [str(i) for i in range(500)] and seen_at_end == [500] and errs == [b"oops\n"]


def test_environment_and_session(tmp_path):
    kw, got = lines_of({"name": "e", "cwd": tmp_path})
    child = Supervisor().start([PY, "-c", "import os; print(os.environ['X_SUP'], "
                                "os.environ['PYTHONUNBUFFERED'], os.getsid(0) == os.getpid())"],
                               env={"X_SUP": "yes"}, **kw)
    assert child.wait(15) and got == ["yes 1 True"]  # its own session: it leads its group


def test_argument_lists_only_and_clear_spawn_errors(tmp_path):
    sup = Supervisor()
    for bad in ("echo hi", b"echo hi", [], ["echo", 1]):
        with pytest.raises(TypeError, match="never a shell"):
            sup.start(bad, name="x", cwd=tmp_path)
    with pytest.raises(SpawnError) as err:
        sup.start([str(tmp_path / "no-such-program")], name="x", cwd=tmp_path)
    assert err.value.stage == "start" and isinstance(err.value.cause, FileNotFoundError)
    assert str(err.value).startswith(f"cannot start {tmp_path / 'no-such-program'}: ")
    with pytest.raises(SpawnError) as err:
        sup.start([PY, "-c", "pass"], name="x", cwd=tmp_path, log_path=tmp_path / "no" / "x.log")
    assert err.value.stage == "output" and "No such file or directory" in str(err.value)
    assert sup.live() == []


def test_time_limit_terminates_and_says_so(tmp_path):
    child = Supervisor().start([PY, "-c", "import time; time.sleep(60)"], name="slow",
                               cwd=tmp_path, time_limit=0.5)
    assert child.wait(15)
    assert (child.timed_out, child.exit_code, child.state) == (True, -signal.SIGTERM, "timed-out")
    assert not child.killed and child.ended - child.started < 10


def test_cancel_escalates_to_sigkill_for_a_child_that_ignores_sigterm(tmp_path):
    kw, got = lines_of({"name": "stubborn", "cwd": tmp_path})
    child = Supervisor().start([PY, "-c", STUBBORN], grace=0.5, **kw)
    wait_for(lambda: got == ["ready"], what="the SIGTERM handler")
    assert child.cancel() and not child.cancel()  # twice is harmless
    assert child.wait(15)
    assert (child.exit_code, child.killed, child.state) == (-signal.SIGKILL, True, "cancelled")
    assert child.cancel_requested is not None and not child.cancel()  # ended: nothing to cancel


def test_cancel_reaches_the_whole_process_group(tmp_path):
    pidfile = tmp_path / "grandchild.pid"
    body = (f"import subprocess, time; p = subprocess.Popen(['sleep', '60']); "
            f"open({str(pidfile)!r}, 'w').write(str(p.pid)); time.sleep(60)")
    child = Supervisor().start([PY, "-c", body], name="group", cwd=tmp_path)
    wait_for(lambda: pidfile.exists() and pidfile.read_text(), what="the grandchild")
    grandchild = psutil.Process(int(pidfile.read_text()))
    assert child.cancel(grace=0.5) and child.wait(15) and child.exit_code == -signal.SIGTERM
    wait_for(lambda: not grandchild.is_running() or grandchild.status() == psutil.STATUS_ZOMBIE,
             what="the grandchild gone")


def test_a_reaped_child_is_never_signalled(tmp_path, monkeypatch):
    """Once reaped, a child's pid may be another process's: no signal goes to it any more."""
    child = Supervisor().start([PY, "-c", "pass"], name="quick", cwd=tmp_path)
    assert child.wait(15) and child.exit_code == 0
    sent = []
    monkeypatch.setattr(os, "killpg", lambda pid, sig: sent.append((pid, sig)))
    monkeypatch.setattr(os, "kill", lambda pid, sig: sent.append((pid, sig)))
    assert not child.signal(signal.SIGKILL) and not child.cancel()
    child.terminate(grace=0.0)
    time.sleep(0.2)
    assert sent == [] and not child.killed


def test_a_recycled_pid_is_never_signalled(tmp_path):
    """A process known by pid and create time: another process under that pid is left alone."""
    stranger = subprocess.Popen([PY, "-c", "import time; time.sleep(60)"],
                                start_new_session=True)
    try:
        real = psutil.Process(stranger.pid).create_time()
        assert not signal_group(stranger.pid, signal.SIGKILL, create_time=real - 100.0)
        adopted = Supervisor().adopt(stranger.pid, real - 100.0, name="old-run", grace=0.1)
        assert adopted.wait(5)  # not the process it was: ended at once, as a gone one would
        assert not adopted.cancel() and not adopted.signal(signal.SIGKILL)
        time.sleep(0.3)
        assert stranger.poll() is None  # still running, never signalled
    finally:
        stranger.kill()
        stranger.wait()


def test_adopted_process_is_stopped_with_escalation(tmp_path):
    """A process this supervisor did not start (a run from before a restart)."""
    ready = tmp_path / "ready"
    body = STUBBORN.replace('print("ready", flush=True)', f"open({str(ready)!r}, 'w').close()")
    other = subprocess.Popen([PY, "-c", body], start_new_session=True)
    try:
        wait_for(ready.exists, what="the SIGTERM handler")
        adopted = Supervisor().adopt(other.pid, psutil.Process(other.pid).create_time(),
                                     name="old-run", grace=0.5)
        assert adopted.running and adopted.cancel()
        assert other.wait(15) == -signal.SIGKILL
        assert adopted.wait(15) and adopted.killed and adopted.exit_code is None
        assert adopted.state == "cancelled"
    finally:
        if other.poll() is None:
            other.kill()
            other.wait()


def test_thread_tasks_share_the_vocabulary():
    sup = Supervisor()
    go = threading.Event()

    def work(cancel):
        go.wait(10)
        while not cancel.is_set():
            time.sleep(0.01)

    task = sup.run_thread(work, name="w")
    assert task.state == "running" and task.running and sup.live() == [task]
    go.set()
    assert task.cancel() and not task.cancel() and task.wait(10)
    assert (task.state, task.error) == ("cancelled", None) and task.ended >= task.started
    done = sup.run_thread(lambda cancel: None, name="d")
    assert done.wait(10) and done.state == "done" and not done.cancel()
    failed = sup.run_thread(lambda cancel: 1 / 0, name="f")
    assert failed.wait(10) and failed.state == "failed"
    assert isinstance(failed.error, ZeroDivisionError)
    own = threading.Event()
    given = sup.run_thread(lambda cancel: None if cancel is own else 1 / 0, name="g", cancel=own)
    assert given.wait(10) and given.state == "done"
    assert sup.live() == []


def test_a_failing_exit_callback_does_not_stop_the_others(tmp_path):
    calls = []
    child = Supervisor().start([PY, "-c", "pass"], name="cb", cwd=tmp_path)
    child.add_exit_callback(lambda c: 1 / 0)
    child.add_exit_callback(lambda c: calls.append(c.exit_code))
    assert child.wait(15) and calls == [0]


def test_shutdown_stops_everything(tmp_path):
    sup = Supervisor()
    kw, got = lines_of({"name": "s", "cwd": tmp_path})
    stubborn = sup.start([PY, "-c", STUBBORN], **kw)
    plain = sup.start([PY, "-c", "import time; time.sleep(60)"], name="p", cwd=tmp_path)
    thread = sup.run_thread(lambda cancel: cancel.wait(60), name="t")
    wait_for(lambda: got == ["ready"], what="the SIGTERM handler")
    sup.shutdown(timeout=0.5)
    assert (stubborn.exit_code, plain.exit_code) == (-signal.SIGKILL, -signal.SIGTERM)
    assert thread.state == "cancelled" and sup.live() == []
    wait_for(no_zombie_children, 5, "children reaped")


def test_infinite_limits_are_accepted():
    assert S._seconds(float("inf")) == threading.TIMEOUT_MAX and S._seconds(-1.0) == 0.0
