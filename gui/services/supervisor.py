"""The one place the cockpit starts, watches, times out and cancels its children: processes
(training runs, compression jobs, dataset builds) and threads (the Generate tab's jobs). No Dash.

Every task has `state` (running | done | failed | cancelled | timed-out), `started` / `ended`,
`cancel()` (a process: SIGTERM to its group, SIGKILL `grace` s later, `killed` says so; a thread:
its cancel Event is set), `done` (set once ended and every exit callback ran), add_exit_callback.

`Supervisor.start` -> `Child`: an argument list (never a shell string) in a new session, stdin
/dev/null, PYTHONUNBUFFERED=1, output to a file (after a `# cockpit: TIME ARGV` line) or to line
callbacks. Its watcher reaps it under the lock every signal is sent under, so a signalled pid is
never another's; an optional time limit terminates it as cancel() does and sets `timed_out`.
`Supervisor.adopt` -> `Adopted`: a process started elsewhere, known by pid and create time,
polled, signalled only while that pid is still that process; its `exit_code` stays None.
"""
from __future__ import annotations

import logging
import os
import shlex
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from contextlib import suppress
from pathlib import Path
from typing import IO

import psutil

log = logging.getLogger(__name__)

HEADER = "# cockpit:"        # first line(s) of a log the supervisor opens; readers skip them
DEFAULT_GRACE_S = 5.0
SAME_START_S = 1.0           # create times this close are one process (status.json's proc_start
                             # and sidecars come from another process's clock reading)
POLL_S = 0.1                 # how often an adopted process is checked
READER_JOIN_S = 5.0          # wait this long for the last lines of a child's pipes


class SpawnError(RuntimeError):
    """A child could not be started. `stage`: "output" (its log file could not be opened) or
    "start" (the program could not be executed); `cause`: the OSError."""

    def __init__(self, stage: str, target: str, cause: OSError):
        self.stage, self.target, self.cause = stage, target, cause
        verb = "write" if stage == "output" else "start"
        super().__init__(f"cannot {verb} {target}: {self.reason}")

    @property
    def reason(self) -> str:
        return self.cause.strerror or str(self.cause)


# -- identity and signals ------------------------------------------------------------------------
def create_time_of(pid: int) -> float | None:
    """psutil's create time of process `pid` (zombies included), None when there is none."""
    try:
        return psutil.Process(pid).create_time()
    except psutil.Error:
        return None


def same_process(pid: int, create_time: float) -> bool:
    """Whether `pid` is still the process that started at `create_time` (zombies included)."""
    created = create_time_of(pid) if pid > 0 else None
    return created is not None and abs(created - create_time) < SAME_START_S


def alive(pid: int, create_time: float) -> bool:
    """Whether that process still runs (a zombie has ended)."""
    try:
        proc = psutil.Process(pid)
        return (abs(proc.create_time() - create_time) < SAME_START_S
                and proc.status() != psutil.STATUS_ZOMBIE)
    except psutil.Error:
        return False


def signal_group(pid: int, sig: int, create_time: float | None = None) -> bool:
    """Send `sig` to pid's process group when pid leads one, else to pid alone; with
    `create_time`, only while pid is still that process. True when sent; a process that is gone
    is not an error, one we may not signal is (PermissionError)."""
    if pid <= 0 or (create_time is not None and not same_process(pid, create_time)):
        return False
    try:
        (os.killpg if os.getpgid(pid) == pid else os.kill)(pid, sig)
    except ProcessLookupError:
        return False
    return True


def _daemon(name: str, target: Callable, *args) -> threading.Thread:
    """A started daemon thread running target(*args)."""
    thread = threading.Thread(target=target, args=args, daemon=True, name=name)
    thread.start()
    return thread


def _seconds(value: float) -> float:
    """A wait in seconds that Event.wait accepts (an infinite limit waits as long as it can)."""
    return min(max(0.0, value), threading.TIMEOUT_MAX)


# -- what processes and threads share ------------------------------------------------------------
class _Task:
    """Start and end times, state, cancel and exit callbacks (see the module docstring)."""

    def __init__(self, name: str):
        self.name = name
        self.started = time.time()
        self.ended: float | None = None
        self.cancel_requested: float | None = None
        self.exited = threading.Event()     # it has ended (callbacks may still be running)
        self.done = threading.Event()       # ... and every exit callback has run
        self._lock = threading.Lock()
        self._callbacks: list[Callable] = []
        self._finished = False

    @property
    def running(self) -> bool:
        return not self.exited.is_set()

    def add_exit_callback(self, fn: Callable) -> None:
        """Call fn(self) once this has ended: from the watcher thread, or now if it has."""
        with self._lock:
            if not self._finished:
                self._callbacks.append(fn)
                return
        fn(self)

    def wait(self, timeout: float | None = None) -> bool:
        return self.done.wait(timeout)

    def _end(self) -> None:
        """Mark ended, run the callbacks (an exception is logged; the others still run)."""
        self.ended = self.ended or time.time()
        self.exited.set()
        while True:
            with self._lock:
                if not self._callbacks:
                    self._finished = True
                    break
                fn = self._callbacks.pop(0)
            try:
                fn(self)
            except Exception:
                log.exception("exit callback of %s failed", self.name)
        self.done.set()


class _Process(_Task):
    """A process: cancel with grace and SIGKILL, optional time limit. A subclass's `_send(sig,
    escalation)` signals the group unless the process is gone (Child: reaped; Adopted: not the
    same pid and create time); `escalation` marks the SIGKILL after a grace period."""

    def __init__(self, name: str, pid: int, create_time: float | None, grace: float):
        super().__init__(name)
        self.pid, self.create_time, self.grace = pid, create_time, float(grace)
        self.exit_code: int | None = None
        self.timed_out = False
        self.killed = False                 # escalated to SIGKILL after a cancel or timeout

    @property
    def state(self) -> str:
        if self.running:
            return "running"
        if self.cancel_requested is not None:
            return "cancelled"
        if self.timed_out:
            return "timed-out"
        return "done" if self.exit_code == 0 else "failed"

    def signal(self, sig: int) -> bool:
        """Send `sig` to the process group now; False when the process has already ended."""
        return self._send(sig)

    def cancel(self, grace: float | None = None) -> bool:
        """SIGTERM now, SIGKILL after `grace` s (default: the child's) unless it has exited.
        False (nothing sent) when it has ended or a cancel is already under way."""
        with self._lock:
            if self.cancel_requested is not None or self.exited.is_set():
                return False
            self.terminate(grace)
            self.cancel_requested = time.time()
        return True

    def terminate(self, grace: float | None = None) -> None:
        """SIGTERM to the group, and a thread that SIGKILLs it `grace` s later if still there."""
        grace = self.grace if grace is None else float(grace)
        self._send(signal.SIGTERM)
        _daemon(f"{self.name}-escalate", self._escalate, grace)

    def _escalate(self, grace: float) -> None:
        if not self.exited.wait(_seconds(grace)):
            self._send(signal.SIGKILL, escalation=True)

    def _limit(self, seconds: float) -> None:
        if self.exited.wait(_seconds(seconds)):
            return
        with self._lock:
            if self.cancel_requested is not None or self.timed_out:
                return
            self.timed_out = True
        self.terminate()


class Child(_Process):
    """A process the supervisor started (see Supervisor.start)."""

    def __init__(self, name: str, argv: list[str], proc: subprocess.Popen, grace: float, log_file: IO | None):
        super().__init__(name, proc.pid, create_time_of(proc.pid), grace)
        self.argv, self.proc, self.log = argv, proc, log_file
        self._reap_lock = threading.Lock()
        self._reaped = False
        self._readers: list[threading.Thread] = []

    def _send(self, sig: int, escalation: bool = False) -> bool:
        with self._reap_lock:      # unreaped: the pid is still ours
            if self._reaped:
                return False
            self.killed |= escalation  # before the signal: the watcher may reap at once after it
            return signal_group(self.pid, sig)

    def _watch(self) -> None:
        if hasattr(os, "waitid"):
            with suppress(ChildProcessError):  # reaped by another's poll(): proc.wait() knows the code
                os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOWAIT)
        with self._reap_lock:
            code = self.proc.wait()
            self._reaped = True
        self.exit_code, self.ended = code, time.time()
        self.exited.set()         # a cancel from now on sends nothing; escalation stands down
        for t in self._readers:  # the last lines (a result, an error) are read before ending
            t.join(READER_JOIN_S)
        if self.log is not None:
            self.log.close()
        self._end()


class Adopted(_Process):
    """A process this supervisor did not start, known by pid and create time (Supervisor.adopt)."""

    def _send(self, sig: int, escalation: bool = False) -> bool:
        if self.create_time is None or not same_process(self.pid, self.create_time):
            return False
        self.killed |= escalation
        return signal_group(self.pid, sig, self.create_time)

    def _watch(self) -> None:
        while self.create_time is not None and alive(self.pid, self.create_time):
            time.sleep(POLL_S)
        self._end()


class ThreadTask(_Task):
    """A function run in a daemon thread (Supervisor.run_thread)."""

    def __init__(self, name: str, cancel_event: threading.Event | None = None):
        super().__init__(name)
        self.cancel_event = cancel_event if cancel_event is not None else threading.Event()
        self.error: Exception | None = None
        self._state = "running"

    @property
    def state(self) -> str:
        return self._state

    def cancel(self) -> bool:
        """Set the cancel Event; False when the work has ended or was already cancelled."""
        with self._lock:
            if self.exited.is_set() or self.cancel_event.is_set():
                return False
            self.cancel_event.set()
            self.cancel_requested = time.time()
        return True

    def _run(self, target: Callable[[threading.Event], None]) -> None:
        try:
            target(self.cancel_event)
            self._state = "cancelled" if self.cancel_event.is_set() else "done"
        except Exception as exc:  # the owner says what happened; never stuck on "running"
            self.error, self._state = exc, "failed"
        self._end()


# -- the supervisor ------------------------------------------------------------------------------
def _check_argv(argv: Sequence) -> list[str]:
    if isinstance(argv, (str, bytes)) or not argv or \
            not all(isinstance(a, (str, os.PathLike)) for a in argv):
        raise TypeError("a child is started from a non-empty list of arguments, never a shell "
                        f"string: {argv!r}")
    return [os.fspath(a) for a in argv]


def _pump(stream: IO[bytes], on_line: Callable[[bytes], None] | None) -> None:
    for raw in stream:
        if on_line is not None:
            on_line(raw)


class Supervisor:
    """Children and worker threads of one cockpit (thread-safe); finished ones are forgotten."""

    def __init__(self):
        self._lock = threading.Lock()
        self._live: set[_Task] = set()

    def start(self, argv: Sequence, *, name: str, cwd: Path, env: dict | None = None,
              log_path: Path | None = None, log_mode: str = "w", notes: Iterable[str] = (),
              on_stdout: Callable[[bytes], None] | None = None,
              on_stderr: Callable[[bytes], None] | None = None,
              time_limit: float | None = None, grace: float = DEFAULT_GRACE_S) -> Child:
        """Start `argv` and watch it; raises SpawnError. With `log_path` (opened with `log_mode`),
        stdout and stderr go there after a `# cockpit: TIME ARGV` line and a `# cockpit: NOTE` line
        per note; without, their raw lines go to on_stdout / on_stderr. `env` adds to os.environ."""
        argv = _check_argv(argv)
        log_file = None
        if log_path is not None:
            try:
                log_file = open(log_path, log_mode, encoding="utf-8")  # noqa: SIM115 (the child's log)
            except OSError as exc:
                raise SpawnError("output", str(log_path), exc) from None
            header = [f"{time.strftime('%Y-%m-%d %H:%M:%S')} {shlex.join(argv)}", *notes]
            log_file.writelines(f"{HEADER} {line}\n" for line in header)
            log_file.flush()
            out, err = log_file, subprocess.STDOUT
        else:
            out = err = subprocess.PIPE
        try:
            proc = subprocess.Popen(argv, cwd=cwd, env={**os.environ, **(env or {}), "PYTHONUNBUFFERED": "1"},
                                    stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                    start_new_session=True, close_fds=True)
        except OSError as exc:
            if log_file is not None:
                log_file.close()
            raise SpawnError("start", argv[0], exc) from None
        child = Child(name, argv, proc, grace, log_file)
        if log_file is None:
            child._readers = [_daemon(f"{name}-out", _pump, proc.stdout, on_stdout),
                              _daemon(f"{name}-err", _pump, proc.stderr, on_stderr)]
        self._track(child)
        _daemon(f"{name}-watch", child._watch)
        if time_limit is not None:
            _daemon(f"{name}-limit", child._limit, time_limit)
        return child

    def adopt(self, pid: int, create_time: float | None, *, name: str,
              grace: float = DEFAULT_GRACE_S) -> Adopted:
        """Watch process `pid`, started elsewhere at `create_time` (None: whatever runs as pid
        now). If it is not that process (gone, or the pid is another's), it is ended at once."""
        adopted = Adopted(name, pid, create_time_of(pid) if create_time is None else create_time, grace)
        self._track(adopted)
        _daemon(f"{name}-watch", adopted._watch)
        return adopted

    def run_thread(self, target: Callable[[threading.Event], None], *, name: str,
                   cancel: threading.Event | None = None) -> ThreadTask:
        """Run target(cancel_event) in a daemon thread: state done, cancelled (the Event was set
        when it returned) or failed (it raised an Exception, kept in `error`)."""
        task = ThreadTask(name, cancel)
        self._track(task)
        _daemon(name, task._run, target)
        return task

    def live(self) -> list[_Task]:
        with self._lock:
            return [t for t in self._live if t.running]

    def shutdown(self, timeout: float = 10.0) -> None:
        """Cancel every thread; SIGTERM every process, SIGKILL the ones left after `timeout`."""
        tasks = self.live()
        for t in tasks:
            if isinstance(t, ThreadTask):
                t.cancel()
        terminate_all([t for t in tasks if isinstance(t, _Process)], timeout)
        for t in tasks:
            t.wait(timeout)

    def _track(self, task: _Task) -> None:
        with self._lock:
            self._live.add(task)
        task.add_exit_callback(self._forget)

    def _forget(self, task: _Task) -> None:
        with self._lock:
            self._live.discard(task)


def terminate_all(processes: Iterable[_Process], timeout: float = 10.0) -> None:
    """SIGTERM each; SIGKILL each one not done `timeout` s later, then wait as long again."""
    processes = list(processes)
    for p in processes:
        p.signal(signal.SIGTERM)
    for p in processes:
        if not p.done.wait(timeout):
            p.signal(signal.SIGKILL)
            p.done.wait(timeout)
