"""Disk full, file-size limits and read-only run folders, with real kernel errors.

The tests run as root in CI, where chmod stops nothing, so the faults come from the kernel:
- RLIMIT_FSIZE set on the running trainer (prlimit) just below a checkpoint's size: the next
  checkpoint write fails with EFBIG (works for any user, no privileges).
- a tmpfs of ~2.4 checkpoints, mounted in a private mount namespace: ENOSPC mid-run.
- the run folder bind-mounted read-only, from the start or once a checkpoint exists: EROFS.
The namespace tests need root with CAP_SYS_ADMIN (CI has it) and are skipped with the reason
otherwise; nothing outside the namespace is mounted or changed.

Every time: the trainer exits non-zero with one line on stderr (no traceback), every
checkpoints/stepNNNNNN.pt loads, no temp file is left, metrics.db passes integrity_check with whole
steps, the cockpit shows Crashed, and once the disk is usable again the run resumes and completes.
"""
from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys

import pytest

from tests.conftest import ROOT
from tests.reliability.conftest import record
from tests.reliability.helpers import (
    PYTHON,
    check_run_folder,
    mount_namespaces_work,
    ns_prefix,
    resume_args,
    start_module,
    train_args,
    tree,
    wait_until,
)
from umoec.run import RunDir, RunState

STEPS = 12
SETS = ("logging.save_every=4",)
NS_REASON = mount_namespaces_work() if sys.platform == "linux" else "Linux only"
needs_namespaces = pytest.mark.skipif(bool(NS_REASON), reason=NS_REASON)
CLEAR = ("File too large", "No space left on device", "database or disk is full",
         "disk I/O error", "Read-only file system", "readonly database",
         "unable to open database file")


def one_clear_line(stderr: str) -> str:
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    assert "Traceback" not in stderr and len(lines) == 1, stderr[-3000:]
    assert lines[0].startswith("train: ") and any(c in lines[0] for c in CLEAR), lines[0]
    return lines[0]


def resume_to_the_end(run: RunDir, logs) -> int:
    """Resume from the newest checkpoint on a healthy disk; the run must complete."""
    newest = run.latest_checkpoint()
    proc = start_module("bin.train", resume_args(run.root, newest.path), logs)
    assert proc.wait(300) == 0, proc.stderr()
    report = check_run_folder(run)
    assert report.problems == [] and report.state is RunState.COMPLETED
    assert report.db_max_step == STEPS and report.temp_files == []
    return newest.step


def after_the_fault(run: RunDir) -> dict:
    report = check_run_folder(run)
    assert report.problems == [], report.problems
    assert report.temp_files == [], report.temp_files   # the atomic writer cleaned up
    assert report.state is RunState.CRASHED, report.label
    assert report.newest is not None
    return {"newest_checkpoint": report.newest, "db_step": report.db_max_step,
            "status": report.label}


@pytest.mark.slow
def test_file_size_limit_fails_the_next_checkpoint_cleanly(tmp_path, small_data):
    """prlimit(RLIMIT_FSIZE) on the live trainer, 1 byte below a checkpoint: EFBIG mid-write."""
    run, logs = RunDir(tmp_path / "run"), tmp_path / "logs"
    proc = start_module("bin.train", train_args(run.root, small_data, STEPS, *SETS), logs)
    first = run.checkpoint_path(4)
    wait_until(first.exists, 300, "the first checkpoint", proc)
    limit = first.stat().st_size - 1
    try:
        resource.prlimit(proc.pid, resource.RLIMIT_FSIZE, (limit, limit))
    except ProcessLookupError:
        pytest.fail("the trainer finished before the limit was set")
    assert proc.wait(300) == 1
    line = one_clear_line(proc.stderr())
    figures = after_the_fault(run)
    assert figures["newest_checkpoint"] == 4 and "File too large" in line
    assert "exit code 1" in figures["status"]   # the trainer recorded its own crash
    figures["resumed_from"] = resume_to_the_end(run, logs)
    record("disk_fsize", {"error": line, **figures})


@pytest.mark.slow
@needs_namespaces
def test_disk_full_mid_run(tmp_path, small_data, tiny_run):
    """A tmpfs with room for two checkpoints and a bit: the third write hits ENOSPC."""
    ckpt_size = (tiny_run / "checkpoints" / "step000004.pt").stat().st_size
    size_k = (2 * ckpt_size + 500_000) // 1024
    disk, copy, logs = tmp_path / "disk", tmp_path / "copy", tmp_path / "logs"
    disk.mkdir()
    args = ["--tmpfs", str(disk), f"{size_k}k", "--copy-out", str(disk), str(copy), "--",
            PYTHON, "-m", "bin.train", *train_args(disk / "run", small_data, STEPS, *SETS)]
    proc = start_module("tests.reliability.nsrun", args, logs, prefix=ns_prefix())
    assert proc.wait(300) == 1, proc.stderr()
    line = one_clear_line(proc.stderr())
    assert list(disk.iterdir()) == []          # the tmpfs lived only in the namespace
    run = RunDir(copy / "run")
    figures = after_the_fault(run)
    figures["resumed_from"] = resume_to_the_end(run, logs)
    record("disk_full", {"tmpfs_kib": size_k, "error": line, **figures})


@pytest.mark.slow
@needs_namespaces
def test_checkpoint_folder_turns_read_only_mid_run(tmp_path, small_data):
    """checkpoints/ is remounted read-only once step 4 is saved: the next save meets EROFS.

    (A folder holding open-for-write files, like metrics.db, cannot be remounted read-only
    while the trainer runs: the kernel answers EBUSY, so the fault is placed on checkpoints/.)"""
    run, logs = RunDir(tmp_path / "run"), tmp_path / "logs"
    run.checkpoints_dir.mkdir(parents=True)
    args = ["--ro-when", str(run.checkpoint_path(4)), str(run.checkpoints_dir), "--",
            PYTHON, "-m", "bin.train", *train_args(run.root, small_data, STEPS, *SETS)]
    proc = start_module("tests.reliability.nsrun", args, logs, prefix=ns_prefix())
    assert proc.wait(300) == 1, proc.stderr()
    stderr = proc.stderr().replace(f"nsrun: {run.checkpoints_dir} is read-only now\n", "")
    line = one_clear_line(stderr)
    assert "Read-only file system" in line
    figures = after_the_fault(run)
    assert figures["newest_checkpoint"] == 4 and "exit code 1" in figures["status"]
    figures["resumed_from"] = resume_to_the_end(run, logs)
    record("disk_read_only_mid_run", {"error": line, **figures})


@pytest.mark.slow
def test_resume_into_a_read_only_run_folder_changes_nothing(tmp_path, tiny_run):
    """Resuming a run whose folder cannot be written: a clear error and not one byte changed."""
    run = RunDir(tmp_path / "tiny")
    shutil.copytree(tiny_run, run.root)
    before = {p: (run.root / p).read_bytes() for p in tree(run.root)}
    argv = resume_args(run.root, run.checkpoint_path(4))
    if os.geteuid() != 0:
        for p in [run.root, run.checkpoints_dir]:
            p.chmod(0o555)
        res = subprocess.run([PYTHON, "-m", "bin.train", *argv], cwd=ROOT, capture_output=True,
                             text=True, timeout=300)
        for p in [run.root, run.checkpoints_dir]:
            p.chmod(0o755)
    elif not NS_REASON:
        res = subprocess.run([*ns_prefix(), PYTHON, "-m", "tests.reliability.nsrun", "--ro",
                              str(run.root), "--", PYTHON, "-m", "bin.train", *argv], cwd=ROOT,
                             capture_output=True, text=True, timeout=300)
    else:
        pytest.skip(f"root cannot be refused a write by chmod, and {NS_REASON}")
    assert res.returncode != 0
    line = one_clear_line(res.stderr)
    assert {p: (run.root / p).read_bytes() for p in tree(run.root)} == before
    assert check_run_folder(run).problems == []
    record("disk_read_only_resume", {"error": line, "exit_code": res.returncode})
