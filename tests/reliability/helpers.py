"""Shared pieces of the reliability suite: starting the real trainer, and checking that a run
folder left behind by a fault is whole (every checkpoint loads, the database passes
`PRAGMA integrity_check` and holds whole steps, the logs have no torn lines, the cockpit's status
logic tells the truth)."""
from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from gui.services.runs import summarise
from tests.conftest import ROOT
from tests.umoec.train.conftest import TINY
from umoec import config as C
from umoec.metrics import read as q
from umoec.run import RunDir, RunState
from umoec.run.csvlog import CSV_COLUMNS
from umoec.train import checkpoint as ckpt

# One torch thread: exact resume needs the same thread count, and spinning OpenMP threads on a
# busy 2-core machine slow the tiny model tens of times.
ONE_THREAD = {"OMP_NUM_THREADS": "1"}
TEMP_CKPT_RE = re.compile(r"^\.step\d{6,}\.pt\..+\.tmp$")
PYTHON = sys.executable


def train_args(out: Path, data: Path, steps: int, *sets: str) -> list[str]:
    """`bin.train` arguments for a fresh tiny run (TINY of the trainer tests + `sets`)."""
    overrides = TINY + [f"training.steps={steps}", f"data.path={data}", *sets]
    return ["--out", str(out), "--config", "configs/tier1_micro.yaml", "--quiet",
            *[a for s in overrides for a in ("--set", s)]]


def resume_args(run: Path, checkpoint: Path) -> list[str]:
    """Continue `run` from `checkpoint` with its own frozen config (as the cockpit's Resume)."""
    return ["--config", str(run / "config.yaml"), "--out", str(run), "--resume", str(checkpoint),
            "--quiet"]


@dataclass
class Proc:
    """A trainer process whose output goes to files (an unread pipe could block it)."""

    popen: subprocess.Popen
    out: Path
    err: Path

    @property
    def pid(self) -> int:
        return self.popen.pid

    def stderr(self) -> str:
        return self.err.read_text(errors="replace")

    def wait(self, timeout: float = 300) -> int:
        return self.popen.wait(timeout)


STARTED: list[Proc] = []  # every process a test started; conftest kills leftovers after each test


def kill_leftovers() -> None:
    """SIGKILL the process groups of started processes that still run (a failed test's)."""
    while STARTED:
        proc = STARTED.pop()
        if proc.popen.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.popen.wait(30)


def start_module(module: str, args: list[str], logs: Path, env: dict | None = None,
                 prefix: list[str] | None = None, **kw) -> Proc:
    logs.mkdir(parents=True, exist_ok=True)
    n = len(list(logs.glob("*.out")))
    out, err = logs / f"{n:03d}.out", logs / f"{n:03d}.err"
    full_env = {**os.environ, **ONE_THREAD, **(env or {})}
    full_env.pop("UMOEC_DEBUG", None)
    with open(out, "w") as fo, open(err, "w") as fe:
        popen = subprocess.Popen([*(prefix or []), PYTHON, "-m", module, *args], cwd=ROOT,
                                 env=full_env, stdout=fo, stderr=fe, stdin=subprocess.DEVNULL,
                                 start_new_session=True, **kw)
    STARTED.append(Proc(popen, out, err))
    return STARTED[-1]


def wait_until(predicate, timeout: float, what: str, proc: Proc | None = None,
               interval: float = 0.02):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        if proc is not None and proc.popen.poll() is not None:
            raise AssertionError(f"process exited ({proc.popen.returncode}) while waiting for "
                                 f"{what}: {proc.stderr()[-2000:]}")
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")


def own_status(run: RunDir, pid: int) -> bool:
    """True once the process `pid` has written its first status.json."""
    try:
        status = run.read_status()
    except ValueError:
        return False
    return status is not None and status.pid == pid


# -- what a fault may leave behind ----------------------------------------------------------
@dataclass
class FolderReport:
    checkpoints: list[int]
    temp_files: list[str]
    db_max_step: int | None
    whole_steps: int
    csv_rows: int
    state: RunState
    label: str
    problems: list[str] = field(default_factory=list)

    @property
    def newest(self) -> int | None:
        return self.checkpoints[-1] if self.checkpoints else None


_LOADED: dict[tuple, int] = {}  # (path, size, mtime_ns) -> step: checkpoints already verified


def check_checkpoints(run: RunDir, problems: list[str]) -> tuple[list[int], list[str]]:
    steps, temps = [], []
    for entry in sorted(os.scandir(run.checkpoints_dir), key=lambda e: e.name):
        if TEMP_CKPT_RE.match(entry.name):
            temps.append(entry.name)
            continue
        m = re.match(r"^step(\d{6,})\.pt$", entry.name)
        if not m:
            problems.append(f"unexpected file in checkpoints/: {entry.name}")
            continue
        st = entry.stat()
        key = (entry.path, st.st_size, st.st_mtime_ns)
        if key not in _LOADED:
            try:
                _LOADED[key] = int(ckpt.load(entry.path)["step"])
            except ckpt.CheckpointError as exc:
                problems.append(f"half-written or damaged checkpoint {entry.name}: {exc}")
                continue
        if _LOADED[key] != int(m.group(1)):
            problems.append(f"{entry.name} holds step {_LOADED[key]}")
        steps.append(int(m.group(1)))
    return sorted(steps), temps


def step_shape(conn) -> dict[int, tuple[int, int, int]]:
    """step -> (head_losses rows, moe_routing rows, mod_gates rows) of every logged step."""
    rows = conn.execute(
        "SELECT t.step, (SELECT COUNT(*) FROM head_losses h WHERE h.step = t.step), "
        "(SELECT COUNT(*) FROM moe_routing r WHERE r.step = t.step), "
        "(SELECT COUNT(*) FROM mod_gates g WHERE g.step = t.step) FROM train_metrics t "
        "ORDER BY t.step").fetchall()
    return {s: (h, r, g) for s, h, r, g in rows}


def check_database(run: RunDir, problems: list[str], shape: tuple | None = None
                   ) -> tuple[int | None, int]:
    """integrity_check, then every logged step has all of its rows (one transaction per step)."""
    if not run.db_path.exists():
        return None, 0
    with q.open_db(run.db_path) as conn:
        result = [r[0] for r in conn.execute("PRAGMA integrity_check").fetchall()]
        if result != ["ok"]:
            problems.append(f"metrics.db integrity_check: {result[:5]}")
        conn.execute("BEGIN")
        shapes = step_shape(conn)
        conn.execute("COMMIT")
    if shape is None and shapes:
        shape = next(iter(shapes.values()))
    torn = [s for s, got in shapes.items() if got != shape]
    if torn:
        problems.append(f"steps with partial rows: {torn[:10]} (expected {shape} rows each)")
    return (max(shapes) if shapes else None), len(shapes) - len(torn)


def check_text_files(run: RunDir, problems: list[str]) -> int:
    rows = 0
    if run.csv_path.exists():
        lines = run.csv_path.read_text().splitlines()
        if lines and lines[0] != ",".join(CSV_COLUMNS):
            problems.append(f"log.csv header: {lines[0]!r}")
        for i, line in enumerate(lines[1:], 2):
            if len(line.split(",")) != len(CSV_COLUMNS):
                problems.append(f"log.csv line {i} is torn: {line!r}")
            rows += 1
    if run.config_path.exists():
        try:
            C.load(run.config_path)
        except C.ConfigError as exc:
            problems.append(f"config.yaml: {exc}")
    return rows


def check_run_folder(run: RunDir, shape: tuple | None = None) -> FolderReport:
    """Everything a reader of the folder (cockpit, resume) depends on, checked."""
    problems: list[str] = []
    steps, temps = check_checkpoints(run, problems)
    db_max, whole = check_database(run, problems, shape)
    rows = check_text_files(run, problems)
    s = summarise(run)  # reads status.json: a torn file would show as "unreadable"
    if "unreadable" in s.detail or "not a run status" in s.detail:
        problems.append(f"status.json: {s.detail}")
    return FolderReport(steps, temps, db_max, whole, rows, s.state, s.label, problems)


def tree(root: Path) -> dict[str, int]:
    """relative path -> size of every file under root (to prove nothing was written elsewhere)."""
    out = {}
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            p = Path(dirpath) / name
            try:
                out[str(p.relative_to(root))] = p.lstat().st_size
            except FileNotFoundError:
                continue
    return out


# -- private mount namespaces (real ENOSPC / EROFS without touching the machine) -------------
def mount_namespaces_work() -> str:
    """'' when `unshare -m` can mount a tmpfs here (root with CAP_SYS_ADMIN), else why not."""
    unshare = shutil.which("unshare")
    if unshare is None:
        return "unshare (util-linux) is not installed"
    probe = subprocess.run([*ns_prefix(), PYTHON, "-m", "tests.reliability.nsrun", "--probe"],
                           cwd=ROOT, capture_output=True, text=True, timeout=60)
    if probe.returncode != 0:
        return ("private mount namespaces are not available (needs root with CAP_SYS_ADMIN): "
                + (probe.stderr.strip().splitlines() or ["?"])[-1])
    return ""


def ns_prefix() -> list[str]:
    return [shutil.which("unshare") or "unshare", "-m", "--propagation", "private", "--"]
