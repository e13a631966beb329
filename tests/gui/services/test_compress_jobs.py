"""Compression / Evaluation tabs without a browser or a model run: the upload sandbox, the job
runner (success, error, crash, timeout, cancel), the job manager's compression_jobs rows, the
restart reconciliation, the model dropdowns (the model store, read from headers only), the
checkpoint list's export column. Workers here are tiny fake scripts (the figures:
tests/gui/figures/test_compression.py)."""
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

from gui.services import models
from gui.services.compress_jobs import (
    Job,
    JobError,
    JobManager,
    JobRunner,
    read_sidecar,
    status_kind,
    status_reason,
)
from gui.services.models import CHECKPOINT_CHOICE
from gui.services.uploads import (
    UploadError,
    decode_contents,
    decoded_size,
    ensure_sandbox,
    safe_upload_name,
    store_upload,
)
from umoec import config as C
from umoec.engine import modelfile as mf
from umoec.engine import store
from umoec.metrics import TrainingDB, read
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


def fake_python_for(tmp_path, script: str) -> str:
    """An executable standing in for python: runs `script` with the worker's arguments (after
    `-m umoec.compress.worker`) in sys.argv."""
    worker = tmp_path / "fake_worker.py"
    worker.write_text(script)
    exe = tmp_path / "fake-python"
    exe.write_text(f"#!/bin/sh\nexec {PY} {worker} \"$@\"\n")
    exe.chmod(0o755)
    return str(exe)


@pytest.fixture
def fake_python(tmp_path) -> str:
    """An executable that ignores `-m umoec.compress.worker ...` and runs FAKE_WORKER."""
    return fake_python_for(tmp_path, FAKE_WORKER)


def rows(run: RunDir) -> list[dict]:
    with read.open_db(run.db_path) as conn:
        return read.compression_jobs(conn).to_dict("records")


def test_refusals_before_a_worker_leave_failed_rows(run, tmp_path):
    jobs = JobManager(run.root.parent, python="/nonexistent/python")
    with pytest.raises(JobError, match="type the path of a file"):
        jobs.start_compress(run, "  ", "turbo")
    with pytest.raises(JobError, match="unknown profile"):
        jobs.start_compress(run, "/etc/hostname", "ultra")
    assert rows(run) == []
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    src = tmp_path / "in.txt"
    src.write_text("hello")
    gone = "ab" * 32
    cases = [(str(tmp_path / "missing.bin"), "default", None, "does not exist"),
             (str(tmp_path), CHECKPOINT_CHOICE, "step000004.pt", "is a folder, not a file"),
             (str(fifo), "default", None, "not a regular file"),
             (str(src), CHECKPOINT_CHOICE, None, "choose a checkpoint of run r1"),
             (str(src), CHECKPOINT_CHOICE, "step999999.pt", "is not in its checkpoints folder"),
             (str(src), gone, None, "model abababababab is no longer on the model search path")]
    for path, model, ck, reason in cases:
        job = jobs.start_compress(run, path, "turbo", ck, model=model)
        assert job.state == "failed" and reason in job.message and not job.running
    got = rows(run)
    assert [status_kind(r["status"]) for r in got] == ["failed"] * len(cases)
    for r, (_, _, _, reason) in zip(reversed(got), cases, strict=True):
        assert reason in status_reason(r["status"])
    assert read_sidecar(run, got[0]["job_id"])["model_request"] == "model abababababab"
    for c in run.checkpoints():
        c.path.unlink()
    job = jobs.start_compress(run, str(src), "turbo", "step000004.pt", model=CHECKPOINT_CHOICE)
    assert "has no checkpoint yet" in job.message and "or choose a model" in job.message


def test_unreadable_file_is_a_failed_row(run, tmp_path, monkeypatch):
    from gui.services import compress_jobs
    src = tmp_path / "secret.bin"
    src.write_bytes(b"x")
    src.chmod(0)
    if os.geteuid() == 0:  # root reads files whatever their mode: refuse the open instead

        def refuse(*_a, **_k):
            raise PermissionError(13, "Permission denied")
        monkeypatch.setattr(compress_jobs, "open", refuse, raising=False)
    job = JobManager(run.root.parent).start_compress(run, str(src), "turbo")
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
    job = jobs.start_compress(run, str(src), "turbo", "step000004.pt")  # no model: checkpoint
    assert job.argv[job.argv.index("--checkpoint") + 1] == str(run.checkpoints()[0].path)
    assert job.env["UMOEC_RUNS_DIR"] == str(run.root.parent.resolve())  # the store's runs folder
    if how != "crash":  # a crashing worker may already be gone on a loaded machine
        assert job.running and rows(run)[0]["status"] == "running"
        with pytest.raises(JobError, match="already running"):
            jobs.start_compress(run, str(src), "turbo")
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
    worker = subprocess.Popen([PY, "-c", "import time; time.sleep(60)", "umoec.compress.worker"],
                              start_new_session=True)
    import psutil
    atomic_write_text(run.job_sidecar_path(orphan), json.dumps({
        "owner": {"pid": dead.pid, "create_time": 1.0, "token": "gone"},
        "worker_pid": worker.pid, "worker_create_time": psutil.Process(worker.pid).create_time()}))
    live = JobManager(run.root.parent)
    atomic_write_text(run.job_sidecar_path(mine), json.dumps({"owner": {
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
    with pytest.raises(JobError, match="unknown profile 'auto'"):   # it could leave the model out
        jobs.start_eval(run, "step000004.pt", 100, "auto")
    with pytest.raises(JobError, match="choose a checkpoint"):
        jobs.start_eval(run, "nope.pt", 100, "turbo", model=CHECKPOINT_CHOICE)
    with pytest.raises(JobError, match="choose a checkpoint"):
        jobs.start_eval(run, None, 100, "turbo")  # neither a model nor a checkpoint
    with pytest.raises(JobError, match="no longer on the model search path"):
        jobs.start_eval(run, None, 100, "turbo", model="cd" * 32)
    job = jobs.start_eval(run, "step000004.pt", 100, "turbo")
    assert job.state == "failed" and "cannot start the worker" in job.message
    assert job.argv[job.argv.index("--checkpoint") + 1].endswith("step000004.pt")
    job = jobs.start_eval(run, "step000004.pt", 100, "turbo", model="default")
    assert job.argv[job.argv.index("--model") + 1] == str(store.DEFAULT_FILE)
    assert job.label == models.model_label(*default_name_hash())


def test_export_requests_are_checked(run):
    jobs = JobManager(run.root.parent, python="/nonexistent/python")
    with pytest.raises(JobError, match="is not in run r1's checkpoints folder"):
        jobs.start_export(run, "step000999.pt")
    job = jobs.start_export(run, "step000004.pt")
    assert job.state == "failed" and "cannot start the worker" in job.message
    assert job.argv[-4:] == ["--checkpoint", str(run.checkpoint_path(4)),
                             "--output", str(run.model_path(4))]
    assert jobs.latest("r1", "export") is job and jobs.latest("r1", "compress") is None


# -- the model store in the dropdowns ---------------------------------------------------------
def default_name_hash() -> tuple[str, str]:
    d = mf.describe(store.DEFAULT_FILE)
    return d["name"], d["hash"]


def other_model(path, name: str, damage: bool = False, delta: int = 1):
    """A model that differs from the shipped default in one weight by `delta` (another hash),
    written to `path`; damage=True flips a weight byte after writing (the header still reads
    fine)."""
    base = mf.read(store.DEFAULT_FILE)
    tensors = dict(base.tensors)
    key = sorted(tensors)[0]
    t = tensors[key].copy()
    t.flat[0] = t.flat[0] + delta
    tensors[key] = t
    m = mf.make(name, base.config, tensors, {"params": 1234})
    mf.write(m, path)
    if damage:
        blob = bytearray(path.read_bytes())
        blob[-1] ^= 0x01
        path.write_bytes(bytes(blob))
    return m


def test_model_options_list_the_store_default_first_and_preselected(run, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))  # an empty user store
    monkeypatch.delenv("UMOEC_MODEL_PATH", raising=False)
    name, digest = default_name_hash()
    options, default, errors = models.model_options(run.root.parent, run)
    assert default == digest and errors == []
    assert options[0] == {"label": f"{name} · {digest[:12]} · shipped · default", "value": digest}
    assert options[-1]["value"] == CHECKPOINT_CHOICE and "a checkpoint of run r1" in \
        options[-1]["label"] and not options[-1].get("disabled")
    # a model exported into the run, a copy of the default in the user store (listed once) and a
    # file that is no model at all (not listed, said in the note)
    run.models_dir.mkdir()
    mine = other_model(run.model_path(4), "r1-step4")
    user = store.user_dir({"XDG_DATA_HOME": str(tmp_path / "xdg")})
    user.mkdir(parents=True)
    (user / "copy.umm").write_bytes(store.DEFAULT_FILE.read_bytes())
    (run.models_dir / "junk.umm").write_bytes(b"not a model at all")
    options, default, errors = models.model_options(run.root.parent, run)
    labels = [o["label"] for o in options]
    assert labels == [f"{name} · {digest[:12]} · shipped · default",
                      f"r1-step4 · {mine.hash[:12]} · run r1",
                      options[-1]["label"]]
    assert len(errors) == 1 and "junk.umm" in errors[0] and "not a u-moec-tiny model" in errors[0]
    assert models.problems_note(errors).startswith("Not listed: model file ")
    assert models.find_entry(run.root.parent, mine.hash).path == run.model_path(4)
    assert models.find_entry(run.root.parent, "00" * 32) is None
    no_checkpoints = RunDir(tmp_path / "runs" / "empty")
    assert models.checkpoint_option(no_checkpoints)["disabled"] is True


def test_model_dropdown_keeps_the_choice_and_falls_back_to_the_default(run):
    from dash import no_update

    from gui.components.checkpoint_picker import model_dropdown_view
    runs = run.root.parent
    options, value, note = model_dropdown_view(runs, run, None, None, None)
    _, digest = default_name_hash()
    assert value == digest and note == ""
    same = model_dropdown_view(runs, run, CHECKPOINT_CHOICE, options, "")
    assert same == (no_update, CHECKPOINT_CHOICE, no_update)
    assert model_dropdown_view(runs, run, "gone", options, "")[1] == digest
    assert model_dropdown_view(runs, run, None, options, "", prefer=CHECKPOINT_CHOICE)[1] == \
        CHECKPOINT_CHOICE
    for c in run.checkpoints():  # "a checkpoint of the run" is offered but disabled now
        c.path.unlink()
    assert model_dropdown_view(runs, run, CHECKPOINT_CHOICE, options, "")[1] == digest


def test_checkpoint_list_shows_the_exported_model_or_an_export_button(run):
    from gui.pages.training.callbacks import checkpoint_list, checkpoint_models
    (run.checkpoints_dir / "step000008.pt").write_bytes(b"newer")
    run.models_dir.mkdir()
    m = other_model(run.model_path(8), "r1-step8")
    os.utime(run.model_path(8), (time.time() + 5, time.time() + 5))
    cks = run.checkpoints()
    exported = checkpoint_models(run, cks)
    assert exported["step000004.pt"] == {}
    assert exported["step000008.pt"]["label"] == f"r1-step8 ({m.hash[:12]})"
    html = str(checkpoint_list(cks, exported))
    assert "coding model" in html and f"r1-step8 ({m.hash[:12]})" in html
    assert "Export model" in html and "'index': 'step000004.pt'" in html
    assert "'index': 'step000008.pt'" not in html  # exported: no button
    os.utime(run.model_path(8), (1.0, 1.0))  # older than its checkpoint: export again
    assert "Export again" in str(checkpoint_list(cks, checkpoint_models(run, cks)))
    run.model_path(8).write_bytes(b"broken")
    html = str(checkpoint_list(cks, checkpoint_models(run, cks)))
    assert "Export again" in html and "not a u-moec-tiny model file" in html
    sim = str(checkpoint_list(cks, checkpoint_models(run, cks), simulated=True))
    assert "simulated, no weights" in sim and "Export" not in sim
    assert "coding model" not in str(checkpoint_list(cks))  # a Forge run: no export column


def test_jobs_table_names_the_model():
    from gui.pages.compression.callbacks import jobs_table, model_cell
    row = {"job_id": 3, "input_path": "/x/a.txt", "profile": "turbo", "status": "done",
           "checkpoint": "/r/checkpoints/step000004.pt", "raw_bytes": 100,
           "compressed_bytes": 50, "elapsed_s": 1.0}
    assert model_cell(row, {"model": "m (0123456789ab)"}) == "m (0123456789ab)"
    assert model_cell(row, {"model_request": "checkpoint step000004.pt (exported on use)"}) == \
        "checkpoint step000004.pt (exported on use)"
    assert model_cell(row, {}) == "checkpoint step000004.pt"
    table = str(jobs_table(pd.DataFrame([row]), 3, [], False, {3: "m (0123456789ab)"}))
    assert "Th('Model')" in table and "m (0123456789ab)" in table
    assert "Checkpoint" not in table and "threads" not in table


def test_a_baseline_that_failed_on_the_file_is_a_row_with_its_reason_not_a_bar():
    from gui.pages.compression.callbacks import comparison_frame, jobs_table
    row = {"job_id": 3, "input_path": "/x/bash", "profile": "cm", "status": "done",
           "raw_bytes": 1000, "compressed_bytes": 300, "elapsed_s": 1.0}
    baselines = [{"name": "xz -9e", "raw_bytes": 1000, "packed_bytes": 400, "seconds": 0.1},
                 {"name": "PPMd -o16", "error": "PPMd -o16 failed on this input (ValueError: x)"}]
    table = str(jobs_table(pd.DataFrame([row]), 3, baselines))
    assert "xz -9e (same file)" in table and "PPMd -o16 (same file)" in table
    assert "failed on this input (ValueError: x)" in table
    assert comparison_frame(row, baselines)["method"].tolist() == ["u-moec-tiny (cm)", "xz -9e"]


# -- the new callbacks, called the way the browser calls them -----------------------------------
def test_model_dropdowns_and_export_button_through_dash(run):
    from gui import context, ids
    from gui.pages.header import ids as header_ids
    from gui.pages.training import ids as training_ids
    from tests.gui.analysis_support import dash_client
    _name, digest = default_name_hash()
    with dash_client(run.root.parent) as client:
        base = {f"{header_ids.REFRESH}.n_intervals": 1, f"{ids.RUN_SELECT}.value": "r1"}
        _status, resp = client.call(f"{ids.COMPRESS_MODEL}.options",
                                   {**base, f"{ids.TABS}.active_tab": ids.TAB_COMPRESSION},
                                   [f"{header_ids.REFRESH}.n_intervals"])
        got = resp[ids.COMPRESS_MODEL]
        assert got["value"] == digest and got["options"][0]["label"].endswith("· default")
        assert got["options"][-1]["value"] == CHECKPOINT_CHOICE
        # the Evaluation tab starts on the run's own checkpoint (it has one, not simulated)
        _, resp = client.call(f"{ids.EVAL_MODEL}.options",
                              {**base, f"{ids.TABS}.active_tab": ids.TAB_EVAL},
                              [f"{header_ids.REFRESH}.n_intervals"])
        assert resp[ids.EVAL_MODEL]["value"] == CHECKPOINT_CHOICE
        for model, disabled in ((digest, True), (CHECKPOINT_CHOICE, False)):
            _, resp = client.call(f"{ids.COMPRESS_CHECKPOINT}.disabled",
                                  {f"{ids.COMPRESS_MODEL}.value": model},
                                  [f"{ids.COMPRESS_MODEL}.value"])
            assert resp[ids.COMPRESS_CHECKPOINT]["disabled"] is disabled

        context.of(client.app).jobs.python = "/nonexistent/python"
        key = client.key(f"{training_ids.CHECKPOINT_EXPORT_ACTION}.data")
        button = {"type": training_ids.CHECKPOINT_EXPORT_BTN, "index": "step000004.pt"}

        def press(clicks):
            body = {"output": key, "outputs": {"id": training_ids.CHECKPOINT_EXPORT_ACTION,
                                               "property": "data"},
                    "inputs": [[{"id": button, "property": "n_clicks", "value": clicks}]],
                    "state": [{"id": ids.RUN_SELECT, "property": "value", "value": "r1"}],
                    "changedPropIds": [json.dumps(button, sort_keys=True,
                                                  separators=(",", ":")) + ".n_clicks"]}
            return client.http.post("/_dash-update-component", json=body)
        assert press(None).status_code == 204  # a re-rendered button, not a press
        resp = press(1)
        assert resp.status_code == 200
        action = json.loads(resp.data)["response"][training_ids.CHECKPOINT_EXPORT_ACTION]["data"]
        assert action["text"] == ""  # started (and failed at once: no such python)
        _, resp = client.call(f"{training_ids.CHECKPOINT_EXPORT_STATUS}.children",
                              {**base, f"{ids.TABS}.active_tab": ids.TAB_TRAINING,
                               f"{training_ids.CHECKPOINT_EXPORT_ACTION}.data": action},
                              [f"{training_ids.CHECKPOINT_EXPORT_ACTION}.data"])
        text = str(resp[training_ids.CHECKPOINT_EXPORT_STATUS]["children"])
        assert "Export of step000004.pt failed: cannot start the worker" in text


def test_buttons_pass_the_chosen_model_through_dash(run, tmp_path):
    from gui import context, ids
    from gui.pages.compression import ids as compression_ids
    from gui.pages.evaluation import ids as evaluation_ids
    from tests.gui.analysis_support import dash_client
    _, digest = default_name_hash()
    with dash_client(run.root.parent) as client:
        jobs = context.of(client.app).jobs
        jobs.python = "/nonexistent/python"
        _, resp = client.call(f"{compression_ids.COMPRESS_ACTION}.data", {
            f"{compression_ids.COMPRESS_BTN}.n_clicks": 1, f"{compression_ids.COMPRESS_FILE_PATH}.value":
            str(tmp_path / "missing.bin"), f"{compression_ids.COMPRESS_PROFILE}.value": "turbo",
            f"{ids.COMPRESS_MODEL}.value": digest, f"{ids.COMPRESS_CHECKPOINT}.value": None,
            f"{ids.RUN_SELECT}.value": "r1"}, [f"{compression_ids.COMPRESS_BTN}.n_clicks"])
        assert resp[compression_ids.COMPRESS_ACTION]["data"]["text"] == ""
        row = rows(run)[0]
        assert row["checkpoint"] == str(store.DEFAULT_FILE) and "does not exist" in row["status"]
        _, resp = client.call(f"{evaluation_ids.EVAL_ACTION}.data", {
            f"{evaluation_ids.EVAL_ENWIK8_BTN}.n_clicks": 1, f"{ids.RUN_SELECT}.value": "r1",
            f"{ids.EVAL_MODEL}.value": digest, f"{ids.EVAL_CHECKPOINT}.value": "step000004.pt",
            f"{evaluation_ids.EVAL_MAX_BYTES}.value": 100, f"{evaluation_ids.EVAL_PROFILE}.value": "turbo"},
            [f"{evaluation_ids.EVAL_ENWIK8_BTN}.n_clicks"])
        assert resp[evaluation_ids.EVAL_ACTION]["data"]["text"] == ""
        job = jobs.latest("r1", "eval")
        assert job.argv[job.argv.index("--model") + 1] == str(store.DEFAULT_FILE)
        assert "cannot start the worker" in job.message
