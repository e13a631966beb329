"""Every failure the cockpit can meet shows a message a user can act on, never a traceback:
missing database, corrupt database, missing file, a launcher that cannot start the program, a
trainer that fails, a stop that times out (spec WS7)."""
import sqlite3

from gui.pages.sidebar import callbacks as cc
from gui.pages.sidebar import ids
from gui.pages.training import callbacks as tc
from gui.services.launcher import Launched, Launcher
from tests.gui.services.test_launcher import LONG, fake_program, wait_for
from umoec.run import RunDir, RunStatus


def run_folder(tmp_path, name="r"):
    run = RunDir(tmp_path / name)
    run.root.mkdir()
    RunStatus(state="completed", total_steps=10).write(run.status_path)
    return run


def test_missing_database(tmp_path):
    run = run_folder(tmp_path)
    out = tc.training_update(tmp_path, "r")
    assert f"No metrics database yet at {run.db_path}" in str(out["error"])
    assert out["log"] == "(training.log does not exist yet)"
    assert "No checkpoints yet" in str(out["checkpoints"])


def test_corrupt_database(tmp_path):
    run = run_folder(tmp_path)
    run.db_path.write_bytes(b"this is not sqlite" * 100)
    out = tc.training_update(tmp_path, "r")
    text = str(out["error"])
    assert "file is not a database" in text and "damaged" in text and "log.csv" in text
    busy = tc.db_error_text(run.db_path, sqlite3.OperationalError("database is locked"))
    assert "next refresh will try again" in busy


def test_missing_and_unreadable_files(tmp_path):
    out = cc.fill(ids.CONFIG_LOAD_BTN, None, [], {}, None, str(tmp_path / "gone.yaml"), None)
    assert f"Not loaded: {tmp_path / 'gone.yaml'}: no such file" in str(out["message"])
    (tmp_path / "bin.yaml").write_bytes(b"\xff\xfe\x00garbage")
    out = cc.fill(ids.CONFIG_LOAD_BTN, None, [], {}, None, str(tmp_path / "bin.yaml"), None)
    assert "not UTF-8 text" in str(out["message"])
    out = cc.fill(ids.CONFIG_LOAD_BTN, None, [], {}, None, str(tmp_path), None)
    assert "is a folder" in str(out["message"])
    run = run_folder(tmp_path, "s")
    run.status_path.write_text("{not json")
    view = cc.status_view(tmp_path, Launcher(tmp_path), "s", None)
    assert "Crashed" in str(view["status"]) and "unreadable" in str(view["status"])


def test_launcher_cannot_start_the_program(tmp_path):
    launcher = Launcher(tmp_path / "runs", python=str(tmp_path / "missing-python"))
    msg = cc.control_action(ids.CONFIG_START, launcher, tmp_path / "runs", cc.form.default_values(),
                            "tier1_micro", "simulate", "x", 20, None, None)
    assert msg["ok"] is False and "cannot start" in msg["text"] and "no such program" in msg["text"]
    view = cc.status_view(tmp_path / "runs", launcher, None, msg)
    assert "no such program" in str(view["status"]) and "text-danger" in str(view["status"])


def test_trainer_binary_failing(tmp_path):
    python = fake_program(tmp_path, 'echo "bin.train: no dataset at data/default" >&2\nexit 2')
    launcher = Launcher(tmp_path / "runs", python=python)
    msg = cc.control_action(ids.CONFIG_START, launcher, tmp_path / "runs", cc.form.default_values(),
                            "tier1_micro", "simulate", "fails", 20, None, None)
    assert msg["ok"] and msg["run"] == "fails"
    assert launcher.get("fails").done.wait(10)
    view = cc.status_view(tmp_path / "runs", launcher, "fails", msg)
    assert "Crashed (exit code 2: bin.train: no dataset at data/default)" in str(view["status"])
    assert view["stop_disabled"] is True


def test_stop_timeout_escalates_and_says_so(tmp_path):
    ready = tmp_path / "trap-set"
    python = fake_program(tmp_path, f"trap '' TERM\ntouch {ready}\nwhile true; do sleep 0.1; done")
    launcher = Launcher(tmp_path / "runs", stop_timeout=0.5, python=python)
    launched = launcher.start(LONG, "simulate", "stuck")
    # stop only once the program ignores SIGTERM: sent earlier, the shell dies of it and there is
    # nothing to escalate
    wait_for(lambda: launcher.pending() == ["stuck"] and ready.exists(),
             what="the stuck program with its SIGTERM trap")
    view = cc.status_view(tmp_path / "runs", launcher, "stuck", None)
    assert "Starting" in str(view["status"]) and view["stop_disabled"] is False
    msg = cc.control_action(ids.CONFIG_STOP, launcher, tmp_path / "runs", {}, None, None, None,
                            None, "stuck", None)  # Stop works before the first status.json
    assert msg["ok"] and "waiting up to 0.5 s" in msg["text"]
    assert launched.done.wait(10)
    view = cc.status_view(tmp_path / "runs", launcher, "stuck", None)
    text = str(view["status"])
    assert "did not exit within 0.5 s of SIGTERM: killed with SIGKILL" in text
    assert "Stopped" in text


def test_what_the_trainer_refuses_is_refused_at_start(tmp_path):
    """bf16+fp8 and a missing dataset: the form says so while it is edited, Start with the
    trainer is refused with the reason (no run folder, no crash seconds later), the simulator
    still starts."""
    values = {**cc.form.default_values(), "training.precision": "bf16+fp8",
              "data.path": str(tmp_path / "no-such-data")}
    result = cc.form.check(values, "tier1_micro")
    assert result.ok and set(result.refusals) == {"training.precision", "data.path"}
    text = str(cc.summary(result))
    assert "Config valid." in text and "The trainer will refuse it: training.precision=bf16+fp8" \
        in text and f"no dataset at {tmp_path / 'no-such-data'}" in text
    launcher = Launcher(tmp_path / "runs")
    msg = cc.control_action(ids.CONFIG_START, launcher, tmp_path / "runs", values, "tier1_micro",
                            "train", "refused", 20, None, None)
    assert msg["ok"] is False and "the trainer would refuse this config" in msg["text"]
    assert "bf16+fp8" in msg["text"] and "no dataset at" in msg["text"]
    assert not (tmp_path / "runs" / "refused").exists()
    sim = cc.control_action(ids.CONFIG_START, launcher, tmp_path / "runs", values, "tier1_micro",
                            "simulate", "sim", 20, None, None)
    assert sim["ok"], sim
    stop = cc.control_action(ids.CONFIG_STOP, launcher, tmp_path / "runs", {}, None, None, None,
                             None, sim["run"], None)
    assert stop["ok"] and launcher.get(sim["run"]).done.wait(30)


def test_the_stop_note_ends_when_the_run_has_stopped(tmp_path):
    import os
    run = run_folder(tmp_path, "r")
    msg = {"ok": True, "run": "r", "action": "stop",
           "text": "SIGTERM sent to r (pid 1); waiting up to 30 s for it to exit"}
    RunStatus(state="running", total_steps=10, pid=os.getpid()).write(run.status_path)
    view = cc.status_view(tmp_path, Launcher(tmp_path), "r", msg)
    assert "SIGTERM sent" in str(view["status"])                 # still stopping: said
    RunStatus(state="stopped", total_steps=10).write(run.status_path)
    view = cc.status_view(tmp_path, Launcher(tmp_path), "r", msg)
    assert "Stopped" in str(view["status"]) and "SIGTERM sent" not in str(view["status"])


def test_a_resumed_run_says_resuming_until_its_first_status(tmp_path):
    import time
    run = run_folder(tmp_path, "r")                              # its final status: completed
    launcher = Launcher(tmp_path)
    launcher._runs["r"] = Launched("r", run.root, [], "simulate", pid=4321,
                                           started=time.time() + 1)   # alive: not done yet
    view = cc.status_view(tmp_path, launcher, "r", None)
    text = str(view["status"])
    assert "Resuming (process 4321" in text and "Completed" not in text
    assert view["stop_disabled"] is False


def test_resume_waits_until_the_picker_lists_the_newest_checkpoint(tmp_path):
    run = run_folder(tmp_path, "r")
    RunStatus(state="stopped", total_steps=10).write(run.status_path)
    run.checkpoints_dir.mkdir(exist_ok=True)
    for step in (5, 8):
        run.checkpoint_path(step).write_bytes(b"x")
    launcher = Launcher(tmp_path)
    stale = [{"label": "step 5", "value": "step000005.pt"}]           # before the stop's refresh
    assert cc.status_view(tmp_path, launcher, "r", None, stale)["resume_disabled"] is True
    fresh = stale + [{"label": "step 8", "value": "step000008.pt"}]
    assert cc.status_view(tmp_path, launcher, "r", None, fresh)["resume_disabled"] is False
