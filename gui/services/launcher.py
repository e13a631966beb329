"""Start, stop and resume training processes from the cockpit. The supervisor spawns each run in
its own process group (Stop reaches torchrun's workers too), output to RUNDIR/process.log.
A child that died without a final status.json gets one here (`crashed`, exit code, last printed
line), so the run stays honest after a restart. Stop = SIGTERM (the trainer checkpoints and exits),
SIGKILL after `stop_timeout` s. Runs started by an earlier cockpit are stopped by the pid and start
time in their status.json (adopted: a recycled pid is never signalled).
"""
from __future__ import annotations

import json
import os
import re
import signal
import socket
import sys
import threading
import time
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from umoec import config as C
from umoec.run import RunDir, RunState, RunStatus, effective_state, pid_alive
from umoec.run.atomic import atomic_write_text

from .runs import ACTIVE
from .supervisor import HEADER, Adopted, Child, SpawnError, Supervisor, terminate_all

ROOT = Path(__file__).resolve().parents[2]
STOP_TIMEOUT_S = 30.0
DEFAULT_RATE = 20.0
RUNNERS = {"train": "Train (bin.train)", "simulate": "Simulate (live)"}
NAME_RE = re.compile(r"[^A-Za-z0-9._-]+")


class LaunchError(RuntimeError):
    """Starting, stopping or resuming failed; the message says why and what to do."""


def trainer_available(root: Path = ROOT) -> tuple[bool, str]:
    """(True, "") when bin/train.py exists, else (False, the reason shown beside the option)."""
    if (root / "bin" / "train.py").is_file():
        return True, ""
    return False, "bin/train.py does not exist yet (the trainer is still being built)"


def sanitise_name(text: str | None) -> str:
    """A safe folder name: letters, digits, '.', '_' and '-' only; never '.', '..' or hidden."""
    return NAME_RE.sub("-", (text or "").strip()).strip(".-")[:64]


def default_name(cfg: C.Config, now: float | None = None) -> str:
    return sanitise_name(f"{cfg.tier}-{time.strftime('%Y%m%d-%H%M%S', time.localtime(now))}")


def claim_run_dir(runs_dir: Path, name: str) -> Path:
    """Create a new, empty run folder directly inside runs_dir (name, name-2, name-3, ...)."""
    runs_dir.mkdir(parents=True, exist_ok=True)
    for i in range(1, 1000):
        candidate = runs_dir / (name if i == 1 else f"{name}-{i}")
        with suppress(FileExistsError):
            candidate.mkdir()
            return candidate
    raise LaunchError(f"could not find a free run folder name for {name!r} in {runs_dir}")


def torchrun(python: str = sys.executable) -> list[str]:
    exe = Path(python).parent / "torchrun"
    return [str(exe)] if exe.is_file() else [python, "-m", "torch.distributed.run"]


def build_command(runner: str, run_dir: Path, config_path: Path, *, steps: int, gpus: int = 0,
                  resume: Path | None = None, rate: float = DEFAULT_RATE,
                  python: str = sys.executable) -> list[str]:
    """The argument list that starts (or resumes) a run; see CONTRACTS.md for the commands."""
    if runner == "simulate":
        argv = [python, "-m", "bin.simulate_training", "--out", str(run_dir), "--steps",
                str(steps), "--live", "--rate", f"{rate:g}", "--quiet"]
        return argv + (["--resume", str(resume)] if resume else ["--config", str(config_path)])
    if runner == "train":
        tail = ["-m", "bin.train", "--config", str(config_path), "--out", str(run_dir)]
        if resume:
            tail += ["--resume", str(resume)]
        if gpus > 1:
            return [*torchrun(python), f"--nproc_per_node={gpus}", *tail]
        return [python, *tail]
    raise LaunchError(f"unknown runner {runner!r}; choose one of {', '.join(RUNNERS)}")


def describe_exit(code: int) -> str:
    if code < 0:
        try:
            return f"killed by signal {-code} ({signal.Signals(-code).name})"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exited with code {code}"


def last_output_line(path: Path, max_bytes: int = 8192) -> str:
    """The last non-empty line a process printed (its one-line error message, usually)."""
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            fh.seek(max(0, fh.tell() - max_bytes))
            lines = fh.read().decode("utf-8", errors="replace").splitlines()
    except OSError:
        return ""
    return next((s.strip()[:300] for s in reversed(lines) if s.strip() and not s.startswith(HEADER)), "")


@dataclass
class Launched:
    """A process this cockpit started (or a run it is stopping by pid)."""

    name: str
    run_dir: Path
    argv: list[str]
    runner: str
    pid: int = 0
    started: float = field(default_factory=time.time)
    total_steps: int = 0
    exit_code: int | None = None
    stop_requested: float | None = None
    stop_note: str = ""
    killed: bool = False
    done: threading.Event = field(default_factory=threading.Event)
    child: Child | Adopted | None = field(default=None, repr=False)  # the supervisor's

    @property
    def alive(self) -> bool:
        return not self.done.is_set()

    @property
    def ours(self) -> bool:
        """Started by this cockpit (not adopted to be stopped)."""
        return isinstance(self.child, Child)


class Launcher:
    """Processes started by one cockpit, keyed by run name (thread-safe)."""

    def __init__(self, runs_dir: Path, root: Path = ROOT, stop_timeout: float = STOP_TIMEOUT_S,
                 python: str = sys.executable, supervisor: Supervisor | None = None):
        self.runs_dir, self.root = Path(runs_dir), Path(root)
        self.stop_timeout, self.python = stop_timeout, python
        self.supervisor = supervisor or Supervisor()
        self._lock = threading.Lock()
        self._runs: dict[str, Launched] = {}

    # -- queries ---------------------------------------------------------------------------
    def get(self, name: str | None) -> Launched | None:
        with self._lock:
            return self._runs.get(name) if name else None

    def pending(self) -> list[str]:
        """Runs this cockpit started whose process has not written status.json yet."""
        with self._lock:
            items = list(self._runs.values())
        return [r.name for r in items if r.alive and not RunDir(r.run_dir).status_path.exists()]

    def runner_options(self) -> list[dict]:
        ok, _why = trainer_available(self.root)
        label = RUNNERS["train"] + ("" if ok else " - unavailable")
        return [{"label": label, "value": "train", "disabled": not ok},
                {"label": RUNNERS["simulate"], "value": "simulate"}]

    # -- start / resume --------------------------------------------------------------------
    def start(self, cfg: C.Config, runner: str, name: str | None = None,
              rate: float = DEFAULT_RATE) -> Launched:
        """Freeze `cfg` into a new run folder and start it; refused if the trainer would refuse it."""
        self._check(runner, rate)
        if runner == "train":
            from umoec.train.preflight import refusals
            if why := refusals(cfg, self.root):
                raise LaunchError("not started: the trainer would refuse this config: "
                                  + "; ".join(why.values()))
        base = sanitise_name(name) or default_name(cfg)
        run_dir = claim_run_dir(self.runs_dir, base)
        config_path = RunDir(run_dir).launch_config_path
        try:
            C.save(cfg, config_path, header=f"Config frozen by the cockpit at Start "
                   f"({time.strftime('%Y-%m-%d %H:%M:%S')}); the run writes its own config.yaml.")
        except OSError as exc:
            raise LaunchError(f"cannot write {config_path}: {exc.strerror or exc}") from None
        return self._spawn(run_dir, config_path, cfg, runner, rate)

    def resume(self, run: RunDir, checkpoint: str | None, rate: float = DEFAULT_RATE) -> Launched:
        """Restart `run` from one of its checkpoints, with the runner that wrote it."""
        if not checkpoint:
            raise LaunchError("choose a checkpoint to resume from")
        status = _read_status(run)
        state, detail = effective_state(status)
        live = self.get(run.name)
        if state in ACTIVE or (live and live.alive):
            raise LaunchError(f"{run.name} is still {state.value} ({detail}); stop it first")
        ck = next((c for c in run.checkpoints() if c.path.name == checkpoint), None)
        if ck is None:
            raise LaunchError(f"checkpoint {checkpoint!r} is not in {run.checkpoints_dir} "
                              "(deleted? pick another)")
        runner = "simulate" if status is not None and status.kind == "simulate" else "train"
        self._check(runner, rate)
        try:
            cfg = C.load(run.config_path)
        except C.ConfigError as exc:
            raise LaunchError(f"cannot resume: {exc}") from None
        launched = self._spawn(run.root, run.config_path, cfg, runner, rate, resume=ck.path)
        # Until the child writes its own status.json, the old one says crashed/stopped: say now that
        # it runs (_finalise corrects it, or reports a child already gone or an unwritable folder).
        with suppress(psutil.Error, OSError, ValueError):
            started = psutil.Process(launched.pid).create_time()
            current = run.read_status()
            if current is not None and current.pid == launched.pid:
                return launched  # the child already took over
            run.write_status(RunStatus(state=RunState.RUNNING.value, pid=launched.pid,
                                       step=ck.step, total_steps=cfg.training.steps, kind=runner,
                                       message=f"starting: resuming from {ck.path.name}", proc_start=started))
        return launched

    def _check(self, runner: str, rate: float) -> None:
        """The runner exists (the trainer: is built) and the simulation rate is sane."""
        if runner not in RUNNERS:
            raise LaunchError(f"unknown runner {runner!r}; choose one of {', '.join(RUNNERS)}")
        ok, why = trainer_available(self.root) if runner == "train" else (True, "")
        if not ok:
            raise LaunchError(f"cannot train: {why}; choose '{RUNNERS['simulate']}'")
        if not isinstance(rate, (int, float)) or not 0 < rate <= 10_000:
            raise LaunchError(f"simulation rate {rate!r} must be a number of steps per second in (0, 10000]")

    def _spawn(self, run_dir: Path, config_path: Path, cfg: C.Config, runner: str, rate: float,
               resume: Path | None = None) -> Launched:
        """Start the runner on `run_dir` (appending to its process.log when resuming)."""
        steps = cfg.training.steps
        argv = build_command(runner, run_dir, config_path, steps=steps, gpus=cfg.hardware.gpus,
                             resume=resume, rate=rate, python=self.python)
        log_path = RunDir(run_dir).process_log_path
        try:
            child = self.supervisor.start(argv, name=f"run-{run_dir.name}", cwd=self.root,
                                          log_path=log_path, log_mode="a" if resume else "w")
        except SpawnError as exc:
            if exc.stage == "output":
                raise LaunchError(f"cannot write {log_path}: {exc.reason}") from None
            why = ("no such program (is the environment complete? torchrun comes with torch)"
                   if isinstance(exc.cause, FileNotFoundError) else
                   "permission denied" if isinstance(exc.cause, PermissionError) else exc.reason)
            raise LaunchError(f"cannot start {argv[0]}: {why}") from None
        launched = Launched(run_dir.name, run_dir, argv, runner, pid=child.pid, total_steps=steps,
                            child=child)
        _write_launch_info(run_dir, launched)
        with self._lock:
            self._runs[launched.name] = launched
        child.add_exit_callback(lambda c: self._ended(launched, c))
        return launched

    # -- watching --------------------------------------------------------------------------
    def _ended(self, launched: Launched, child: Child | Adopted) -> None:
        """The supervisor reaped the child (or saw an adopted process go): make its final status
        honest. An adopted process's exit code is unknown: 0, or -9 after SIGKILL."""
        if child.killed:
            launched.killed = True
            launched.stop_note = (f"did not exit within {self.stop_timeout:g} s of SIGTERM: killed "
                                  "with SIGKILL (no final checkpoint; resume from the last one)")
        launched.exit_code = code = child.exit_code
        if code is None:
            code = -signal.SIGKILL if launched.killed else 0
        try:
            self._finalise(launched, code)
        finally:
            launched.done.set()

    def _finalise(self, launched: Launched, code: int) -> None:
        """Write a final status.json if the process left none (or left 'running')."""
        run = RunDir(launched.run_dir)
        try:
            status = run.read_status()
        except ValueError:
            status = None
        if status is not None and status.state != RunState.RUNNING.value:
            return  # the process wrote its own final status
        if launched.killed:
            state, message = RunState.STOPPED, launched.stop_note
        elif code == -signal.SIGTERM and launched.child.cancel_requested is not None:
            # Stop came while the process was starting (Python still importing): SIGTERM ended it
            # before its handler was set. The user asked for this; it is not a crash.
            state, message = RunState.STOPPED, ("stopped during start-up (SIGTERM before its "
                                                "first step): no new checkpoint")
        elif code == 0:
            state, message = RunState.CRASHED, "exited with code 0 without writing a final status"
        else:
            state = RunState.CRASHED
            message = (code > 0 and last_output_line(run.process_log_path)) or describe_exit(code)
        if status is None:
            status = RunStatus(state=state.value, pid=launched.pid, total_steps=launched.total_steps,
                               kind=launched.runner, started_at=launched.started)
        status.state, status.exit_code, status.message = state.value, code, message
        status.updated_at = time.time()
        with suppress(OSError):  # the folder is gone or read-only; the in-memory exit code still shows
            run.write_status(status)

    # -- stopping --------------------------------------------------------------------------
    def stop(self, run: RunDir) -> str:
        """SIGTERM the run's process group, escalate to SIGKILL after stop_timeout seconds."""
        launched = self.get(run.name)
        if launched is not None and launched.alive and launched.ours:
            if launched.stop_requested is not None:
                return (f"Stop already requested {time.time() - launched.stop_requested:.0f} s "
                        "ago; waiting for the process to exit")
            self._cancel(launched)
            launched.stop_requested = time.time()
            return (f"SIGTERM sent to {run.name} (pid {launched.pid}); waiting up to "
                    f"{self.stop_timeout:g} s for its checkpoint and a clean exit")
        return self._stop_external(run)

    def _stop_external(self, run: RunDir) -> str:
        """Stop a run started elsewhere (before a restart) by the pid and start time in status.json."""
        status = _read_status(run)
        state, detail = effective_state(status)
        if status is None or state not in ACTIVE:
            raise LaunchError(f"{run.name} is not running ({state.value}: {detail})")
        if status.host != socket.gethostname():
            raise LaunchError(f"{run.name} runs on host {status.host}; stop it there")
        if not pid_alive(status.pid, status.proc_start):
            raise LaunchError(f"process {status.pid} of {run.name} is already gone")
        with self._lock:
            known = self._runs.get(run.name)
            if known is not None and known.alive and known.stop_requested is not None:
                return "Stop already requested; waiting for the process to exit"
            launched = Launched(run.name, run.root, [], status.kind, pid=status.pid,
                                total_steps=status.total_steps, stop_requested=time.time())
            self._runs[run.name] = launched
        adopted = self.supervisor.adopt(status.pid, status.proc_start, name=f"run-{run.name}")
        launched.child = adopted
        adopted.add_exit_callback(lambda c: self._ended(launched, c))
        self._cancel(launched)
        return (f"SIGTERM sent to {run.name} (pid {status.pid}, started before this cockpit); "
                f"waiting up to {self.stop_timeout:g} s")

    def _cancel(self, launched: Launched) -> None:
        """SIGTERM to the group now, SIGKILL after stop_timeout (the supervisor's cancel)."""
        assert launched.child is not None
        try:
            launched.child.cancel(grace=self.stop_timeout)
        except PermissionError as exc:
            raise LaunchError(f"not allowed to signal process {launched.pid}: "
                              f"{exc.strerror}") from None

    def note(self, name: str | None) -> str:
        """What this cockpit knows about the run's process beyond its status.json."""
        if (launched := self.get(name)) is None:
            return ""
        if launched.alive:
            if launched.stop_requested is not None:
                waited = time.time() - launched.stop_requested
                return (f"Stopping: SIGTERM sent {waited:.0f} s ago, waiting for the checkpoint "
                        f"(SIGKILL after {self.stop_timeout:g} s)")
            return f"process {launched.pid} started by this cockpit ({RUNNERS[launched.runner]})"
        if launched.killed:
            return f"Stop: {launched.stop_note}"
        if launched.exit_code is not None and launched.ours:
            return f"process {launched.pid} {describe_exit(launched.exit_code)}"
        return ""

    def shutdown(self, timeout: float = 10.0) -> None:
        """Stop every live process this cockpit started (tests; the CLI leaves runs going)."""
        with self._lock:
            items = [r.child for r in self._runs.values() if r.alive and r.ours]
        terminate_all(items, timeout)


def _read_status(run: RunDir) -> RunStatus | None:
    try:
        return run.read_status()
    except ValueError as exc:
        raise LaunchError(str(exc)) from None


def _write_launch_info(run_dir: Path, launched: Launched) -> None:
    info = {"argv": launched.argv, "runner": launched.runner, "pid": launched.pid,
            "started_at": launched.started, "cockpit_pid": os.getpid()}
    with suppress(OSError):  # informational only
        atomic_write_text(RunDir(run_dir).launch_info_path, json.dumps(info, indent=1) + "\n")
