"""Background jobs of the Compression, Evaluation and Training tabs: compress, verify, evaluate,
export a checkpoint to a coding model.

Each job is a worker process (`python -m umoec.compress.worker ...`, its own session) reporting
progress as JSON lines. Its state lives here, keyed by run and slot ("compress" for compress +
verify, "eval", "export"); compression jobs also have a row in the run's metrics.db
(`compression_jobs`) and a sidecar RUNDIR/compressed/job-N.json (models asked for and used, input
sha256, baselines, last verification, owner), so a page reload shows the job again. A job codes
with a coding model of the store (gui/services/models.py) or a checkpoint of the run, exported
first; workers get the cockpit's runs folder as the store's ($UMOEC_RUNS_DIR).

A compression_jobs row's status: running -> done | failed: <reason> | cancelled: <reason>. A job
ends once, when the supervisor reaps its worker (result, Cancel, timeout, the worker's error line
or a crash: `conclude`); checks that fail before a worker starts leave a `failed: ...` row too, and
rows left `running` by a cockpit that died are failed by `reconcile()` at the next start.
"""
from __future__ import annotations

import json
import os
import re
import signal
import stat
import subprocess
import sys
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from umoec.compress.profiles import AUTO
from umoec.compress.profiles import names as profile_names
from umoec.metrics import TrainingDB
from umoec.metrics.read import open_db
from umoec.run import RunDir
from umoec.run.atomic import atomic_write_text
from umoec.run.layout import list_runs

from . import models
from .launcher import describe_exit
from .supervisor import Child, SpawnError, Supervisor, create_time_of, same_process, signal_group
from .uploads import safe_upload_name

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_JOB_TIMEOUT_S = 6 * 3600.0
CANCEL_GRACE_S = 5.0
PROFILES = tuple(profile_names())   # the codec's own list: a profile added there is offered here
EVAL_PROFILES = tuple(p for p in PROFILES if p != AUTO)   # an evaluation measures the model
SLOT_OF = {"compress": "compress", "verify": "compress", "eval": "eval", "export": "export"}
STAMP_RE = re.compile(r"^\d{8}-\d{6}-(\d+-)?")  # the prefix uploads get
STAGE_LABELS = {"starting": "starting the worker", "load": "loading the model",
                "export": "exporting the checkpoint to a coding model",
                "compress": "compressing", "baselines": "running the classical compressors",
                "decompress": "decompressing", "starting-eval": "starting"}

_LIVE_MANAGERS: weakref.WeakSet[JobManager] = weakref.WeakSet()


class JobError(RuntimeError):
    """A job could not be started (nothing was recorded); the message says why."""


def status_kind(status: str | None) -> str:
    """'failed: no such file' -> 'failed' (the word before the reason)."""
    return (status or "").split(":", 1)[0].strip()


def status_reason(status: str | None) -> str:
    return (status or "").split(":", 1)[1].strip() if ":" in (status or "") else ""


# -- one worker process -----------------------------------------------------------------------
@dataclass
class Job:
    kind: str                          # compress | verify | eval
    run_name: str
    argv: list[str]
    timeout: float = DEFAULT_JOB_TIMEOUT_S
    label: str = ""                    # what the status line names (file, checkpoint...)
    env: dict = field(default_factory=dict)  # added to the cockpit's environment
    job_id: int | None = None       # the compression_jobs row (compress and verify)
    started: float = field(default_factory=time.time)
    stage: str = "starting"
    done_bytes: int = 0
    total_bytes: int = 0
    state: str = "running"             # running | done | failed | cancelled
    message: str = ""
    result: dict | None = None
    error: str = ""                    # the worker's own error line
    exit_code: int | None = None
    ended: float | None = None
    cancel_requested: float | None = None
    timed_out: bool = False
    pid: int = 0
    proc: subprocess.Popen | None = None
    stderr_tail: deque = field(default_factory=lambda: deque(maxlen=20))
    finished: threading.Event = field(default_factory=threading.Event)
    child: Child | None = field(default=None, repr=False)  # the supervisor's handle

    @property
    def running(self) -> bool:
        return not self.finished.is_set()

    @property
    def elapsed(self) -> float:
        return (self.ended or time.time()) - self.started

    @property
    def fraction(self) -> float | None:
        return self.done_bytes / self.total_bytes if self.total_bytes else None

    def progress_text(self) -> str:
        what = STAGE_LABELS.get(self.stage, self.stage)
        if self.cancel_requested is not None and self.running:
            return f"cancelling ({what})"
        if self.total_bytes and self.stage == "baselines":
            return f"{what} ({self.done_bytes + 1}/{self.total_bytes})"
        if self.total_bytes:
            return f"{what} {self.done_bytes:,} / {self.total_bytes:,} bytes"
        return what


class JobRunner:
    """Starts worker processes and ends each job exactly once (see the module docstring); the
    supervisor spawns, reaps, times out and cancels them."""

    def __init__(self, cwd: Path = ROOT, grace: float = CANCEL_GRACE_S,
                 supervisor: Supervisor | None = None):
        self.cwd, self.grace = Path(cwd), grace
        self.supervisor = supervisor or Supervisor()

    def start(self, job: Job, on_finish: Callable[[Job], None]) -> Job:
        # the worker sizes its threads to the load it finds (umoec/compress/threads.py); the time
        # limit counts from the job's start
        try:
            child = self.supervisor.start(
                job.argv, name=f"job-{job.kind}-{job.run_name}", cwd=self.cwd, env=job.env,
                on_stdout=lambda raw: self._stdout_line(job, raw),
                on_stderr=lambda raw: self._stderr_line(job, raw),
                time_limit=job.started + job.timeout - time.time(), grace=self.grace)
        except SpawnError as exc:
            raise JobError(f"cannot start the worker ({job.argv[0]}): {exc.reason}") from None
        job.child, job.proc, job.pid = child, child.proc, child.pid
        child.add_exit_callback(lambda c: self._ended(job, c, on_finish))
        return job

    def cancel(self, job: Job) -> None:
        """SIGTERM the worker's group, SIGKILL after the grace period."""
        if not job.running or job.cancel_requested is not None:
            return
        job.cancel_requested = time.time()
        if job.child is not None:
            try:
                job.child.cancel(self.grace)
            except PermissionError:
                pass

    @staticmethod
    def _stdout_line(job: Job, raw: bytes) -> None:
        try:
            msg = json.loads(raw)
        except ValueError:
            job.stderr_tail.append(raw.decode("utf-8", "replace").strip())
            return
        if not isinstance(msg, dict):
            return
        event = msg.get("event")
        if event == "progress":
            job.stage = str(msg.get("stage", job.stage))
            job.done_bytes, job.total_bytes = int(msg.get("done", 0)), int(msg.get("total", 0))
        elif event == "result":
            job.result = {k: v for k, v in msg.items() if k != "event"}
        elif event == "error":
            job.error = str(msg.get("message", ""))[:500]

    @staticmethod
    def _stderr_line(job: Job, raw: bytes) -> None:
        line = raw.decode("utf-8", "replace").strip()
        if line:
            job.stderr_tail.append(line[:300])

    @staticmethod
    def _ended(job: Job, child: Child, on_finish: Callable[[Job], None]) -> None:
        """The worker was reaped and its output read: conclude, record, then `finished`."""
        job.exit_code, job.ended = child.exit_code, time.time()
        job.timed_out = job.timed_out or child.timed_out
        job.state, job.message = conclude(job, child.exit_code)
        try:
            on_finish(job)
        except Exception as exc:  # recording failed: say so instead of a silent stuck job
            job.message += f" (could not record the result: {type(exc).__name__}: {exc})"
        finally:
            job.finished.set()


def conclude(job: Job, code: int) -> tuple[str, str]:
    """(state, message) of a finished worker; see the module docstring for the order."""
    took = f"after {job.elapsed:.1f} s"
    if job.result is not None and code == 0:
        return "done", f"done {took}"
    if job.cancel_requested is not None:
        return "cancelled", f"cancelled by the user {took}"
    if job.timed_out:
        return "failed", (f"timed out after {job.timeout:g} s (the job limit; start the cockpit "
                          "with a larger --job-timeout for bigger files)")
    if job.error:
        return "failed", job.error
    last = job.stderr_tail[-1] if job.stderr_tail else ""
    what = "exited without a result" if code == 0 else describe_exit(code)
    return "failed", f"the worker crashed ({what}){': ' + last if last else ''}"


# -- the cockpit's jobs -----------------------------------------------------------------------
def read_sidecar(run: RunDir, job_id: int) -> dict:
    try:
        data = json.loads(run.job_sidecar_path(job_id).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


_SIDECAR_LOCK = threading.Lock()


def _update_sidecar(run: RunDir, number: int, **items) -> None:
    with _SIDECAR_LOCK:  # read-modify-write from the request and the watcher threads
        data = read_sidecar(run, number)
        data.update(items)
        try:
            atomic_write_text(run.job_sidecar_path(number), json.dumps(data, indent=1) + "\n")
        except OSError:
            pass  # the row in metrics.db still holds the outcome


def _checkpoint(run: RunDir, name: str | None):
    """The run's checkpoint whose file is called `name` (None: not one of its own)."""
    return next((c for c in run.checkpoints() if c.path.name == name), None)


def choose(model: str | None, checkpoint: str | None) -> str:
    """The model a request means (compress_path's rule): a model given is that model; none, with a
    checkpoint, is the checkpoint (models.CHECKPOINT_CHOICE); neither is the shipped default."""
    return model or (models.CHECKPOINT_CHOICE if checkpoint is not None else "default")


def resolve_input(text: str | None) -> Path:
    """A typed path as an absolute path (~ expanded, relative to the cockpit's folder)."""
    return Path.cwd() / os.path.expanduser((text or "").strip())   # an absolute path stays as it is


def check_input(path: Path) -> str:
    """'' when `path` is a regular file we can read, else why not (the job's failure reason)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return f"input file {path} does not exist"
    except OSError as exc:
        return f"cannot read input file {path}: {exc.strerror or exc}"
    if stat.S_ISDIR(st.st_mode):
        return f"{path} is a folder, not a file"
    if not stat.S_ISREG(st.st_mode):
        return f"{path} is not a regular file (a device or pipe cannot be compressed)"
    try:
        with open(path, "rb") as fh:
            fh.read(1)
    except OSError as exc:
        return f"cannot read input file {path}: {exc.strerror or exc}"
    return ""


class JobManager:
    """Every compression, verification and evaluation job this cockpit runs (thread-safe)."""

    def __init__(self, runs_dir: Path, python: str = sys.executable,
                 timeout: float = DEFAULT_JOB_TIMEOUT_S, runner: JobRunner | None = None):
        self.runs_dir, self.python, self.timeout = Path(runs_dir), python, float(timeout)
        self.runner = runner or JobRunner()
        # the cockpit's runs folder is the model store's, for the workers too (gui/services/models.py)
        self.worker_env = {"UMOEC_RUNS_DIR": str(self.runs_dir.resolve())}
        self._lock = threading.Lock()
        self._jobs: dict[tuple[str, str], Job] = {}
        self._verify: dict[tuple[str, int], Job] = {}
        self.pid, self.create_time = os.getpid(), create_time_of(os.getpid())
        self.token = f"{self.pid}-{id(self)}-{time.time()}"
        _LIVE_MANAGERS.add(self)

    # -- queries -----------------------------------------------------------------------------
    def latest(self, run_name: str | None, slot: str) -> Job | None:
        with self._lock:
            return self._jobs.get((run_name, slot)) if run_name else None

    def verify_job(self, run_name: str | None, job_id: int | None) -> Job | None:
        with self._lock:
            return self._verify.get((run_name, job_id)) if run_name and job_id else None

    def any_running(self) -> bool:
        """Whether any job of this manager is running (the page pulse refreshes every tick then)."""
        with self._lock:
            jobs = list(self._jobs.values()) + list(self._verify.values())
        return any(job.running for job in jobs)

    def busy(self, run_name: str, slot: str) -> Job | None:
        job = self.latest(run_name, slot)
        return job if job is not None and job.running else None

    # -- compress ----------------------------------------------------------------------------
    def start_compress(self, run: RunDir, input_text: str | None, profile: str | None,
                       checkpoint: str | None = None, *, model: str | None = None) -> Job:
        """Check the request, record a compression_jobs row and start the worker; what codes:
        `choose(model, checkpoint)` (a full hash, "default" or models.CHECKPOINT_CHOICE). JobError
        (nothing recorded) for no file, an unknown profile or an unwritable database; every other
        problem is a recorded `failed: ...` job, returned finished."""
        if not (input_text or "").strip():
            raise JobError("type the path of a file to compress, or upload one")
        if profile not in PROFILES:
            raise JobError(f"unknown profile {profile!r}; choose one of {', '.join(PROFILES)}")
        model = choose(model, checkpoint)
        self._refuse_if_busy(run.name, "compress")
        src = resolve_input(input_text)
        problem = check_input(src)
        use, request, why = self._model_request(run, model, checkpoint)
        problem = problem or why
        output = self._claim_output(run, src)
        try:
            with TrainingDB(run.db_path) as db:
                job_id = db.start_compression_job(str(src), str(output), profile, use)
                if problem:
                    db.finish_compression_job(job_id, f"failed: {problem}"[:500], elapsed_s=0.0)
        except Exception as exc:  # sqlite3.Error, OSError: the run folder is not writable
            raise JobError(f"cannot record the job in {run.db_path}: {exc}") from None
        flag = "--checkpoint" if model == models.CHECKPOINT_CHOICE else "--model"
        argv = [self.python, "-m", "umoec.compress.worker", "compress", "--input", str(src),
                "--output", str(output), flag, use, "--profile", profile]
        job = Job("compress", run.name, argv, self.timeout, label=src.name, job_id=job_id)
        side = dict(job_id=job_id, input_path=str(src), output_path=str(output), model_request=request)
        if problem:
            _update_sidecar(run, job_id, **side)
            return self._finished_early(job, problem)
        _update_sidecar(run, job_id, **side, started=job.started,
                        owner={"pid": self.pid, "create_time": self.create_time, "token": self.token})
        try:
            return self._start(job, run, "compress", self._finish_compress)
        except Exception as exc:  # never leave a row 'running' that no worker will finish
            with TrainingDB(run.db_path) as db:
                db.finish_compression_job(job_id, f"failed: could not start: {exc}"[:500])
            raise JobError(f"could not start the job: {exc}") from None

    def _model_request(self, run: RunDir, model: str,
                       checkpoint: str | None) -> tuple[str, str, str]:
        """(what the worker gets: a checkpoint or .umm path, how tables name it, why it cannot
        be used or '')."""
        if model == models.CHECKPOINT_CHOICE:
            ck = _checkpoint(run, checkpoint)
            if ck is not None:
                return str(ck.path), f"checkpoint {ck.path.name} (exported on use)", ""
            why = (f"run {run.name} has no checkpoint yet: train it until it saves one "
                   "(logging.save_every), or choose a model" if not run.checkpoints() else
                   f"choose a checkpoint of run {run.name} (checkpoint {checkpoint!r} is not "
                   "in its checkpoints folder)")
            return checkpoint or "", f"checkpoint {checkpoint or '?'}", why
        if model == "default":
            entry, why = models.default_entry()
        else:
            entry = models.find_entry(self.runs_dir, model)
            why = "" if entry else (f"model {model[:12]} is no longer on the model search path "
                                    "(deleted or moved?); choose another model")
        if entry is None:
            return model, f"model {model[:12]}", why
        return str(entry.path), models.model_label(entry.name, entry.hash), ""

    def _claim_output(self, run: RunDir, src: Path) -> Path:
        stamp = time.strftime("%Y%m%d-%H%M%S")
        name = STAMP_RE.sub("", safe_upload_name(src.name)) or "file"
        for i in range(1, 1000):
            out = run.compressed_output_path(stamp, name, i)
            if not out.exists():
                return out
        raise JobError(f"too many outputs named {name} in {run.compressed_dir}")

    def _finish_compress(self, job: Job, run: RunDir) -> None:
        r = job.result or {}
        output = Path(job.argv[job.argv.index("--output") + 1])
        if job.state == "done":
            status = "done"
            raw, packed, secs = r.get("raw_bytes"), r.get("packed_bytes"), r.get("seconds")
        else:
            status = f"{job.state}: {job.message}"[:500]
            raw = packed = None
            secs = job.elapsed
            for tmp in output.parent.glob(f".{output.name}.*.tmp"):  # a SIGKILLed atomic write
                tmp.unlink(missing_ok=True)
        asked = job.argv[job.argv.index("--profile") + 1]
        chosen = r.get("profile") if job.state == "done" and asked == AUTO else None
        with TrainingDB(run.db_path) as db:
            db.finish_compression_job(job.job_id, status, raw_bytes=raw, compressed_bytes=packed,
                                      elapsed_s=secs,
                                      profile=f"{AUTO}: {chosen}" if chosen else None)
        _update_sidecar(run, job.job_id, ended=job.ended, wall_s=job.elapsed,
                        input_sha256=r.get("input_sha256"), baselines=r.get("baselines", []),
                        model=r.get("model"), model_hash=r.get("model_hash"),
                        streams=r.get("streams"))

    # -- verify ------------------------------------------------------------------------------
    def start_verify(self, run: RunDir, job_id: int | None, row: dict | None) -> Job:
        """Decompress job `job_id`'s output (row: its compression_jobs row) with the model the
        .umc file names (never the page's selection) and compare sha256."""
        if not job_id or not row:
            raise JobError("choose a finished compression job to verify")
        if status_kind(row.get("status")) != "done":
            raise JobError(f"job {job_id} did not finish ({row.get('status')}): nothing to verify")
        self._refuse_if_busy(run.name, "compress")
        umc = Path(row["output_path"])
        side = read_sidecar(run, job_id)
        argv = [self.python, "-m", "umoec.compress.worker", "verify", "--umc", str(umc),
                "--expect-sha256", str(side.get("input_sha256") or "")]
        job = Job("verify", run.name, argv, self.timeout, label=umc.name, job_id=job_id)
        with self._lock:
            self._verify[(run.name, job_id)] = job
        if not umc.is_file():
            self._finished_early(job, f"the compressed file {umc} is gone")
            self._finish_verify(job, run)
            return job
        return self._start(job, run, "compress", self._finish_verify)

    def _finish_verify(self, job: Job, run: RunDir) -> None:
        _update_sidecar(run, job.job_id, verify=verify_outcome(job))

    # -- evaluate ----------------------------------------------------------------------------
    def start_eval(self, run: RunDir, checkpoint: str | None, max_bytes, profile: str, *,
                   model: str | None = None) -> Job:
        """Evaluate on enwik8 or the run's data: the run's checkpoint `checkpoint`
        (umoec.compress.evaluate.evaluate) when `model` is models.CHECKPOINT_CHOICE or none,
        else the model (a full hash or "default")."""
        if profile not in EVAL_PROFILES:
            raise JobError(f"unknown profile {profile!r}; choose one of {', '.join(EVAL_PROFILES)}")
        try:
            max_bytes = int(max_bytes)
        except (TypeError, ValueError):
            raise JobError("max bytes must be a whole number (0 = the whole file)") from None
        if max_bytes < 0:
            raise JobError("max bytes must be >= 0 (0 = the whole file)")
        model = choose(model, checkpoint or "")
        self._refuse_if_busy(run.name, "eval")
        if model == models.CHECKPOINT_CHOICE:
            ck = _checkpoint(run, checkpoint)
            if ck is None:
                raise JobError(f"run {run.name} has no checkpoint yet" if not run.checkpoints()
                               else "choose a checkpoint to evaluate")
            what, label = ["--checkpoint", str(ck.path)], ck.path.name
        else:
            use, label, why = self._model_request(run, model, None)
            if why:
                raise JobError(why)
            what = ["--model", use]
        argv = [self.python, "-m", "umoec.compress.worker", "eval", "--run", str(run.root), *what,
                "--max-bytes", str(max_bytes), "--profile", profile]
        job = Job("eval", run.name, argv, self.timeout, label=label)
        return self._start(job, run, "eval", lambda j, r: None)

    # -- export ------------------------------------------------------------------------------
    def start_export(self, run: RunDir, checkpoint: str | None) -> Job:
        """Export checkpoint `checkpoint` (a file name in the run's checkpoints folder) to the
        coding model RUN/models/stepNNNNNN.umm, in a worker (it imports torch)."""
        ck = _checkpoint(run, checkpoint)
        if ck is None:
            raise JobError(f"checkpoint {checkpoint!r} is not in run {run.name}'s checkpoints folder")
        self._refuse_if_busy(run.name, "export")
        out = run.model_path(ck.step)
        argv = [self.python, "-m", "umoec.compress.worker", "export", "--checkpoint", str(ck.path),
                "--output", str(out)]
        job = Job("export", run.name, argv, self.timeout, label=ck.path.name)
        return self._start(job, run, "export", lambda j, r: None)

    # -- common ------------------------------------------------------------------------------
    def _refuse_if_busy(self, run_name: str, slot: str) -> None:
        job = self.busy(run_name, slot)
        if job is not None:
            raise JobError(f"a {job.kind} job is already running for run {run_name} "
                           f"({job.progress_text()}): wait for it or cancel it")

    def _finished_early(self, job: Job, reason: str) -> Job:
        job.state, job.message, job.ended = "failed", reason, time.time()
        job.finished.set()
        with self._lock:
            self._jobs[(job.run_name, SLOT_OF[job.kind])] = job
        return job

    def _start(self, job: Job, run: RunDir, slot: str,
               finish: Callable[[Job, RunDir], None]) -> Job:
        job.env = {**self.worker_env, **job.env}
        with self._lock:
            self._jobs[(run.name, slot)] = job
        try:
            self.runner.start(job, lambda j: finish(j, run))
        except JobError as exc:
            job.state, job.message, job.ended = "failed", str(exc), time.time()
            try:
                finish(job, run)
            finally:
                job.finished.set()
        if job.job_id is not None and job.kind == "compress":
            _update_sidecar(run, job.job_id, worker_pid=job.pid,
                            worker_create_time=job.child.create_time if job.child else None)
        return job

    def cancel(self, run_name: str | None, slot: str) -> str:
        job = self.busy(run_name, slot) if run_name else None
        if job is None:
            return "nothing to cancel: no job is running for this run"
        self.runner.cancel(job)
        return f"cancelling the {job.kind} job ({job.label})"

    # -- after a restart ---------------------------------------------------------------------
    def reconcile(self) -> list[str]:
        """Mark jobs left `running` by a cockpit that is gone as failed (and stop their worker);
        one line per job it changed."""
        changed = []
        for run in list_runs(self.runs_dir):
            if not run.db_path.is_file():
                continue
            try:
                with open_db(run.db_path) as conn:
                    rows = conn.execute("SELECT job_id FROM compression_jobs WHERE status = ?",
                                        ("running",)).fetchall()
            except Exception:  # no table yet, damaged database: nothing of ours to fix
                continue
            for (job_id,) in rows:
                reason = self._orphan_reason(run, job_id)
                if reason is None:
                    continue
                try:
                    with TrainingDB(run.db_path) as db:
                        db.finish_compression_job(job_id, f"failed: {reason}"[:500])
                except Exception:
                    continue
                changed.append(f"{run.name} job {job_id}: {reason}")
        return changed

    def _orphan_reason(self, run: RunDir, job_id: int) -> str | None:
        """Why job `job_id` can never finish, or None when its cockpit is still running it."""
        side = read_sidecar(run, job_id)
        owner = side.get("owner") or {}
        pid, token = int(owner.get("pid") or 0), owner.get("token")
        if pid == os.getpid() and any(m.token == token for m in list(_LIVE_MANAGERS)):
            return None  # a live manager in this process runs it
        if pid and pid != os.getpid() and owner.get("create_time") is not None and \
                same_process(pid, float(owner["create_time"])):
            return None  # another cockpit, still alive, owns it
        self._kill_orphan_worker(side)
        who = f" (pid {pid})" if pid else ""
        return (f"the cockpit that ran this job{who} stopped before it finished; "
                "run the job again")

    @staticmethod
    def _kill_orphan_worker(side: dict) -> None:
        pid, created = int(side.get("worker_pid") or 0), side.get("worker_create_time")
        if not pid or created is None:
            return
        try:  # the command line too: a recycled pid or a stranger's process is left alone
            cmd = " ".join(psutil.Process(pid).cmdline())
            if "umoec.compress.worker" in cmd or "gui.compress_worker" in cmd:  # or a pre-move one
                signal_group(pid, signal.SIGKILL, create_time=float(created))
        except (psutil.Error, PermissionError, ValueError):
            pass


def verify_outcome(job: Job) -> dict:
    """{"ok": True/False/None (cancelled), "reason": ..., "ts": ...} of a finished verify job."""
    if job.state == "done":
        r = job.result or {}
        return {"ok": bool(r.get("ok")), "reason": str(r.get("reason", "")), "ts": job.ended}
    return {"ok": None if job.state == "cancelled" else False, "reason": job.message, "ts": job.ended}
