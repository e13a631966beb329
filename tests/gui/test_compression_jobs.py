"""Compression / Evaluation tabs without a browser or a model: the upload sandbox, the job runner
(success, error, crash, timeout, cancel), the job manager's compression_jobs rows, the restart
reconciliation and the figure functions. Workers here are tiny fake scripts (no torch)."""
from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import textwrap
import time

import pandas as pd
import pytest

from gui import viz_utils
from gui.compress_jobs import (Job, JobError, JobManager, JobRunner, read_sidecar, sidecar_path,
                               status_kind, status_reason)
from gui.uploads import (UploadError, decode_contents, decoded_size, ensure_sandbox,
                         safe_upload_name, store_upload)
from umoec import config as C
from umoec.metrics import TrainingDB
from umoec.run import RunDir
from umoec.run.atomic import atomic_write_text

PY = sys.executable


# -- the upload sandbox -------------------------------------------------------------------------
EVIL_NAMES = ["../../etc/passwd", "/etc/passwd", "..\\..\\windows\\system32\\cmd.exe", "a\x00b.txt",
              "\x00", "x" * 300 + ".txt", "y" * 300, "..", ".", "", ".bashrc", "~/.ssh/id_rsa",
              "name with spaces & $(rm -rf).txt", "r\u00e9sum\u00e9.pdf", "a/b/../../../c.bin",
              "-rf", "con.txt\n.sh"]


@pytest.mark.parametrize("name", EVIL_NAMES)
def test_sanitised_names_are_plain_and_short(name):
    safe = safe_upload_name(name)
    assert safe and len(safe) <= 100
    assert "/" not in safe and "\\" not in safe and "\x00" not in safe
    assert safe not in (".", "..") and not safe.startswith((".", "-"))
    assert all(c.isalnum() or c in "._-" for c in safe)


def test_sanitiser_keeps_what_it_can():
    assert safe_upload_name("../../etc/passwd") == "passwd"
    assert safe_upload_name("C:\\Users\\me\\data.csv") == "data.csv"
    assert safe_upload_name("a\x00b.txt") == "ab.txt"
    long = safe_upload_name("x" * 300 + ".txt")
    assert long.endswith(".txt") and len(long) == 100
    assert safe_upload_name("..") == "upload" and safe_upload_name(None) == "upload"


@pytest.mark.parametrize("name", EVIL_NAMES)
def test_uploads_are_stored_inside_the_sandbox(tmp_path, name):
    sandbox = tmp_path / "deep" / "sandbox"
    path = store_upload(sandbox, name, b"hello", max_bytes=100)
    assert path.parent == sandbox.resolve() and path.read_bytes() == b"hello"
    assert sorted(p.name for p in tmp_path.rglob("*") if p.is_file()) == [path.name]
    assert (path.stat().st_mode & 0o777) == 0o600 and (sandbox.stat().st_mode & 0o777) == 0o700


def test_same_name_twice_makes_two_files_and_size_limit_is_clear(tmp_path):
    a = store_upload(tmp_path, "f.bin", b"1", 10)
    b = store_upload(tmp_path, "f.bin", b"2", 10)
    assert a != b and a.read_bytes() == b"1" and b.read_bytes() == b"2"
    with pytest.raises(UploadError, match=r"is 11 B: uploads are limited to 10 B .*type its path"):
        store_upload(tmp_path, "big.bin", b"x" * 11, 10)
    assert not list(tmp_path.glob("*big*"))


def test_sandbox_must_be_a_real_folder(tmp_path):
    target = tmp_path / "elsewhere"
    target.mkdir()
    (tmp_path / "link").symlink_to(target)
    with pytest.raises(UploadError, match="not a real folder"):
        store_upload(tmp_path / "link", "f.bin", b"1", 10)
    (tmp_path / "file").write_text("x")
    with pytest.raises(UploadError, match="cannot create the upload folder"):
        ensure_sandbox(tmp_path / "file" / "sub")
    assert list(target.iterdir()) == []


def test_upload_contents_decoding():
    data = bytes(range(256)) * 3
    contents = "data:application/octet-stream;base64," + base64.b64encode(data).decode()
    assert decoded_size(contents) == len(data) and decode_contents(contents) == data
    assert decoded_size("data:;base64," + base64.b64encode(b"ab").decode()) == 2
    with pytest.raises(UploadError, match="damaged"):
        decode_contents("data:;base64,@@@")


# -- the job runner with fake workers -----------------------------------------------------------
def script(body: str) -> list[str]:
    return [PY, "-c", textwrap.dedent(body)]


PROGRESS_THEN_SLEEP = """
    import json, sys, time
    print(json.dumps({"event": "progress", "stage": "compress", "done": 5, "total": 10}), flush=True)
    time.sleep(60)
"""


def run_job(argv, timeout: float = 60.0, grace: float = 5.0, cancel_after_progress=False):
    finished = []
    job = Job("compress", "r", argv, timeout, label="f")
    runner = JobRunner(grace=grace)
    runner.start(job, finished.append)
    if cancel_after_progress:
        deadline = time.monotonic() + 30
        while job.done_bytes == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert job.progress_text() == "compressing 5 / 10 bytes"
        runner.cancel(job)
        runner.cancel(job)  # twice is harmless
    assert job.finished.wait(60), "the job never ended"
    assert finished == [job]  # on_finish exactly once
    return job


def test_success_keeps_the_result():
    job = run_job(script("""
        import json
        print(json.dumps({"event": "progress", "stage": "compress", "done": 10, "total": 10}))
        print(json.dumps({"event": "result", "raw_bytes": 10, "packed_bytes": 4}))
    """))
    assert (job.state, job.result, job.exit_code) == ("done", {"raw_bytes": 10, "packed_bytes": 4}, 0)
    assert job.message.startswith("done after")


def test_worker_error_line_is_the_message():
    job = run_job(script("""
        import json, sys
        print(json.dumps({"event": "error", "message": "cannot read input file /x: No such file"}))
        sys.exit(2)
    """))
    assert (job.state, job.message) == ("failed", "cannot read input file /x: No such file")


def test_crash_reports_the_signal_and_the_last_line():
    job = run_job(script("""
        import os, signal, sys
        print("loading weights", file=sys.stderr, flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
    """))
    assert job.state == "failed"
    assert job.message == "the worker crashed (killed by signal 9 (SIGKILL)): loading weights"
    job = run_job(script("raise SystemExit(3)"))
    assert job.message == "the worker crashed (exited with code 3)"
    job = run_job(script("print('no result')"))
    assert job.message == "the worker crashed (exited without a result): no result"


def test_timeout_stops_the_worker():
    job = run_job(script(PROGRESS_THEN_SLEEP), timeout=1.0)
    assert job.state == "failed" and job.timed_out
    assert job.message.startswith("timed out after 1 s") and "--job-timeout" in job.message
    assert job.proc.poll() is not None


def test_cancel_sigterm_then_sigkill():
    job = run_job(script(PROGRESS_THEN_SLEEP), cancel_after_progress=True)
    assert (job.state, job.exit_code) == ("cancelled", -15)
    assert job.message.startswith("cancelled by the user after")
    stubborn = PROGRESS_THEN_SLEEP.replace("import json, sys, time",
                                           "import json, signal, sys, time\n"
                                           "    signal.signal(signal.SIGTERM, signal.SIG_IGN)")
    job = run_job(script(stubborn), grace=0.5, cancel_after_progress=True)
    assert (job.state, job.exit_code) == ("cancelled", -9)


def test_unstartable_worker_is_a_clear_error(tmp_path):
    with pytest.raises(JobError, match="cannot start the worker"):
        JobRunner().start(Job("compress", "r", [str(tmp_path / "no-such-python")]), lambda j: None)


# -- the job manager: rows in compression_jobs ------------------------------------------------
FAKE_WORKER = """
import json, os, signal, sys, time
mode = os.environ.get("FAKE_WORKER_MODE", "sleep")
print(json.dumps({"event": "progress", "stage": "compress", "done": 1, "total": 100}), flush=True)
if mode == "crash":
    os.kill(os.getpid(), signal.SIGKILL)
time.sleep(60)
"""


@pytest.fixture
def run(tmp_path) -> RunDir:
    run = RunDir(tmp_path / "runs" / "r1")
    run.root.mkdir(parents=True)
    atomic_write_text(run.config_path, C.dumps(C.load_preset("tier1_micro")))
    run.checkpoints_dir.mkdir()
    (run.checkpoints_dir / "step000004.pt").write_bytes(b"not read by these tests")
    with TrainingDB(run.db_path):
        pass
    return run


@pytest.fixture
def fake_python(tmp_path) -> str:
    """An executable that ignores `-m gui.compress_worker ...` and runs FAKE_WORKER."""
    worker = tmp_path / "fake_worker.py"
    worker.write_text(FAKE_WORKER)
    exe = tmp_path / "fake-python"
    exe.write_text(f"#!/bin/sh\nexec {PY} {worker}\n")
    exe.chmod(0o755)
    return str(exe)


def rows(run: RunDir) -> list[dict]:
    from gui import db
    with db.open_db(run.db_path) as conn:
        return db.compression_jobs(conn).to_dict("records")


def test_refusals_before_a_worker_leave_failed_rows(run, tmp_path):
    jobs = JobManager(run.root.parent, python="/nonexistent/python")
    with pytest.raises(JobError, match="type the path of a file"):
        jobs.start_compress(run, "  ", "turbo", "step000004.pt")
    with pytest.raises(JobError, match="unknown profile"):
        jobs.start_compress(run, "/etc/hostname", "ultra", "step000004.pt")
    assert rows(run) == []
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    src = tmp_path / "in.txt"
    src.write_text("hello")
    cases = [(str(tmp_path / "missing.bin"), "step000004.pt", "does not exist"),
             (str(tmp_path), "step000004.pt", "is a folder, not a file"),
             (str(fifo), "step000004.pt", "not a regular file"),
             (str(src), None, "choose a checkpoint of run r1"),
             (str(src), "step999999.pt", "is not in its checkpoints folder")]
    for path, ck, reason in cases:
        job = jobs.start_compress(run, path, "turbo", ck)
        assert job.state == "failed" and reason in job.message and not job.running
    got = rows(run)
    assert [status_kind(r["status"]) for r in got] == ["failed"] * len(cases)
    for r, (_, _, reason) in zip(reversed(got), cases, strict=True):
        assert reason in status_reason(r["status"])
    for c in run.checkpoints():
        c.path.unlink()
    job = jobs.start_compress(run, str(src), "turbo", "step000004.pt")
    assert "has no checkpoint yet" in job.message


def test_unreadable_file_is_a_failed_row(run, tmp_path, monkeypatch):
    from gui import compress_jobs
    src = tmp_path / "secret.bin"
    src.write_bytes(b"x")
    src.chmod(0)
    if os.geteuid() == 0:  # root reads files whatever their mode: refuse the open instead

        def refuse(*_a, **_k):
            raise PermissionError(13, "Permission denied")
        monkeypatch.setattr(compress_jobs, "open", refuse, raising=False)
    job = JobManager(run.root.parent).start_compress(run, str(src), "turbo", "step000004.pt")
    assert job.state == "failed"
    assert job.message == f"cannot read input file {src}: Permission denied"
    assert rows(run)[0]["status"] == f"failed: cannot read input file {src}: Permission denied"


def wait_running(job: Job) -> None:
    deadline = time.monotonic() + 30
    while job.done_bytes == 0 and time.monotonic() < deadline:
        time.sleep(0.05)


@pytest.mark.parametrize("how", ["cancel", "timeout", "crash"])
def test_every_end_is_recorded_never_running(run, tmp_path, fake_python, monkeypatch, how):
    monkeypatch.setenv("FAKE_WORKER_MODE", "crash" if how == "crash" else "sleep")
    src = tmp_path / "in.txt"
    src.write_text("hello")
    jobs = JobManager(run.root.parent, python=fake_python, timeout=1.5 if how == "timeout" else 60)
    job = jobs.start_compress(run, str(src), "turbo", "step000004.pt")
    assert job.running and rows(run)[0]["status"] == "running"
    with pytest.raises(JobError, match="already running"):
        jobs.start_compress(run, str(src), "turbo", "step000004.pt")
    if how == "cancel":
        wait_running(job)
        assert "cancelling the compress job" in jobs.cancel("r1", "compress")
    assert job.finished.wait(30)
    status = rows(run)[0]["status"]
    expected = {"cancel": "cancelled: cancelled by the user after",
                "timeout": "failed: timed out after 1.5 s",
                "crash": "failed: the worker crashed (killed by signal 9 (SIGKILL))"}[how]
    assert status.startswith(expected), status
    assert jobs.cancel("r1", "compress").startswith("nothing to cancel")
    side = read_sidecar(run, job.job_id)
    assert side["owner"]["pid"] == os.getpid() and side["worker_pid"] == job.pid


def test_restart_marks_jobs_of_a_dead_cockpit_failed(run, tmp_path):
    """A cockpit killed mid-job leaves 'running'; the next one says so and stops the worker."""
    src = tmp_path / "in.txt"
    src.write_text("hello")
    dead = subprocess.Popen([PY, "-c", "pass"])
    dead.wait()
    with TrainingDB(run.db_path) as db:
        orphan = db.start_compression_job(str(src), "out.umc", "turbo", "ck")
        no_sidecar = db.start_compression_job(str(src), "out2.umc", "turbo", "ck")
        mine = db.start_compression_job(str(src), "out3.umc", "turbo", "ck")
        db.finish_compression_job(db.start_compression_job(str(src), "o", "turbo", "ck"), "done")
    worker = subprocess.Popen([PY, "-c", "import time; time.sleep(60)", "gui.compress_worker"],
                              start_new_session=True)
    import psutil
    atomic_write_text(sidecar_path(run, orphan), json.dumps({
        "owner": {"pid": dead.pid, "create_time": 1.0, "token": "gone"},
        "worker_pid": worker.pid, "worker_create_time": psutil.Process(worker.pid).create_time()}))
    live = JobManager(run.root.parent)
    atomic_write_text(sidecar_path(run, mine), json.dumps({"owner": {
        "pid": os.getpid(), "create_time": live.create_time, "token": live.token}}))
    changed = JobManager(run.root.parent).reconcile()
    assert len(changed) == 2
    by_id = {r["job_id"]: r["status"] for r in rows(run)}
    assert by_id[orphan] == (f"failed: the cockpit that ran this job (pid {dead.pid}) stopped before "
                             "it finished; run the job again")
    assert by_id[no_sidecar].startswith("failed: the cockpit that ran this job stopped")
    assert by_id[mine] == "running"  # a live manager in this process still runs it
    assert worker.wait(10) == -9     # the orphaned worker was stopped
    assert JobManager(run.root.parent).reconcile() == []


def test_reconcile_ignores_broken_and_empty_runs(tmp_path):
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "config.yaml").write_text("x: 1\n")
    (tmp_path / "broken" / "metrics.db").write_bytes(b"not a database" * 100)
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "config.yaml").write_text("x: 1\n")
    assert JobManager(tmp_path).reconcile() == []


def test_eval_requests_are_checked(run):
    jobs = JobManager(run.root.parent, python="/nonexistent/python")
    with pytest.raises(JobError, match="whole number"):
        jobs.start_eval(run, "step000004.pt", "lots", "turbo")
    with pytest.raises(JobError, match=">= 0"):
        jobs.start_eval(run, "step000004.pt", -1, "turbo")
    with pytest.raises(JobError, match="choose a checkpoint"):
        jobs.start_eval(run, "nope.pt", 100, "turbo")
    job = jobs.start_eval(run, "step000004.pt", 100, "turbo")
    assert job.state == "failed" and "cannot start the worker" in job.message


# -- figures ---------------------------------------------------------------------------------
def test_compression_comparison_fig():
    empty = viz_utils.compression_comparison_fig(pd.DataFrame())
    assert empty.data == () and "No finished compression job" in empty.layout.annotations[0].text
    df = pd.DataFrame([("u-moec-tiny (turbo)", 1000, 500, 0.5), ("gzip -9", 1000, 400, 0.01),
                       ("zstd -22", 1000, 0, 0.0)],
                      columns=["method", "raw_bytes", "packed_bytes", "seconds"])
    fig = viz_utils.compression_comparison_fig(df, "job #1")
    bar = fig.data[0]
    assert list(bar.y) == ["u-moec-tiny (turbo)", "gzip -9", "zstd -22"]
    assert list(bar.x) == pytest.approx([4.0, 3.2, 0.0])
    assert bar.marker.color[0] == viz_utils.OURS_COLOUR and fig.layout.title.text == "job #1"


def test_eval_bpb_history_fig_has_reference_lines_and_failures():
    empty = viz_utils.eval_bpb_history_fig(pd.DataFrame())
    assert empty.data == () and "Run enwik8 Eval" in empty.layout.annotations[0].text
    evals = pd.DataFrame({"step": [10, 20, 20], "ts": [1.0, 2.0, 3.0],
                          "dataset": ["val", "val", "enwik8[:100]"], "bpb": [3.0, 2.5, 2.4],
                          "roundtrip_ok": [1, 0, 1]})
    base = pd.DataFrame({"step": [20, 20, 20], "dataset": ["enwik8[:100]", "enwik8[:100]", "val"],
                         "method": ["gzip -9", "xz -9e", "gzip -9"],
                         "compressed_bytes": [30, 25, 99], "original_bytes": [100, 100, 100],
                         "seconds": [0.1, 0.2, 0.1]})
    fig = viz_utils.eval_bpb_history_fig(evals, base)
    names = [t.name for t in fig.data]
    assert names == ["val", "enwik8[:100]", "roundtrip FAIL", "gzip -9 (measured)",
                     "xz -9e (measured)"]
    assert list(fig.data[2].x) == [20] and list(fig.data[3].y) == pytest.approx([2.4])
    refs = sorted(s.y0 for s in fig.layout.shapes)
    assert refs == [1.23, 1.95, 2.7]
    notes = [a.text for a in fig.layout.annotations]
    assert "CMIX 1.23 (enwik8)" in notes and "gzip 2.7 (enwik8)" in notes
    sim = viz_utils.eval_bpb_history_fig(evals.iloc[:1], None, simulated=True)
    assert sim.data[0].name == "val (simulated)"
