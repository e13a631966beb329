"""Starting, stopping and resuming runs (gui/services/launcher.py) with the real simulator and fake trainers:
honest final statuses, SIGKILL escalation, no zombies, names that stay inside the runs folder."""
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from gui.services.launcher import (
    Launcher,
    LaunchError,
    build_command,
    claim_run_dir,
    sanitise_name,
    trainer_available,
)
from gui.services.runs import summarise
from tests.conftest import ROOT
from umoec import config as C
from umoec.run import RunDir, RunState

LONG = C.load_preset("tier1_micro", ["training.steps=100000"])


def wait_for(predicate, timeout=30.0, what="condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def no_zombie_children():
    return not [c for c in psutil.Process().children(recursive=True)
                if c.status() == psutil.STATUS_ZOMBIE]


def fake_program(tmp_path: Path, body: str) -> str:
    """An executable that stands in for python: ignores its arguments, runs `body` (sh)."""
    path = tmp_path / "fake-python"
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(0o755)
    return str(path)


def test_commands_are_argument_lists(tmp_path):
    run, cfg = tmp_path / "r", tmp_path / "r" / "launch.yaml"
    sim = build_command("simulate", run, cfg, steps=500, rate=5, python="py")
    assert sim == ["py", "-m", "bin.simulate_training", "--out", str(run), "--steps", "500",
                   "--live", "--rate", "5", "--quiet", "--config", str(cfg)]
    ck = run / "checkpoints" / "step000100.pt"
    assert build_command("simulate", run, cfg, steps=500, resume=ck, python="py")[-2:] == [
        "--resume", str(ck)]
    assert build_command("train", run, cfg, steps=500, python="py") == [
        "py", "-m", "bin.train", "--config", str(cfg), "--out", str(run)]
    multi = build_command("train", run, cfg, steps=500, gpus=4, resume=ck, python="py")
    assert "--nproc_per_node=4" in multi and multi[-2:] == ["--resume", str(ck)]
    assert multi[multi.index("--nproc_per_node=4") + 1:][:2] == ["-m", "bin.train"]
    with pytest.raises(LaunchError, match="unknown runner"):
        build_command("shell", run, cfg, steps=1)


def test_run_names_are_sanitised_and_stay_inside_the_runs_dir(tmp_path):
    assert sanitise_name("../../etc/passwd") == "etc-passwd"
    assert sanitise_name("my run!") == "my-run"
    assert sanitise_name("..") == "" and sanitise_name(".hidden") == "hidden"
    assert len(sanitise_name("x" * 300)) == 64
    first = claim_run_dir(tmp_path / "runs", "a")
    second = claim_run_dir(tmp_path / "runs", "a")
    assert (first.name, second.name) == ("a", "a-2") and second.parent == tmp_path / "runs"


def test_start_stop_resume_and_kill_with_the_simulator(tmp_path):
    launcher = Launcher(tmp_path, stop_timeout=20)
    launched = launcher.start(LONG, "simulate", "sim one", rate=50)
    run = RunDir(launched.run_dir)
    assert run.name == "sim-one" and (run.root / "launch.yaml").is_file()
    wait_for(lambda: summarise(run).state is RunState.RUNNING and summarise(run).step > 0,
             what="running")
    assert C.load(run.config_path).training.steps == 100000
    assert "stopping" not in launcher.note(run.name).lower()

    assert "SIGTERM sent" in launcher.stop(run)
    assert launched.done.wait(30) and launched.exit_code == 0
    s = summarise(run)
    assert s.state is RunState.STOPPED and "checkpoint at step" in s.label
    assert "exited with code 0" in launcher.note(run.name)

    with pytest.raises(LaunchError, match="not in"):
        launcher.resume(run, "step999999.pt")
    resumed = launcher.resume(run, run.latest_checkpoint().path.name, rate=50)
    with pytest.raises(LaunchError, match="stop it first"):
        launcher.resume(run, run.latest_checkpoint().path.name)
    wait_for(lambda: summarise(run).state is RunState.RUNNING, what="running again")
    os.kill(resumed.pid, signal.SIGKILL)
    assert resumed.done.wait(10)
    assert summarise(run).label == "Crashed (exit code -9: killed by signal 9 (SIGKILL))"
    wait_for(no_zombie_children, 5, "children reaped")


def test_missing_program_is_a_launch_error(tmp_path):
    launcher = Launcher(tmp_path / "runs", python=str(tmp_path / "no-such-python"))
    with pytest.raises(LaunchError, match="no such program"):
        launcher.start(LONG, "simulate", "x")


def test_failing_trainer_shows_crashed_with_its_exit_code_and_message(tmp_path):
    python = fake_program(tmp_path, 'echo "train: config error: data.path: no dataset" >&2\nexit 3')
    launcher = Launcher(tmp_path / "runs", python=python)
    launched = launcher.start(LONG, "simulate", "bad")
    assert launched.done.wait(10) and launched.exit_code == 3
    s = summarise(RunDir(launched.run_dir))  # the watcher wrote the final status
    assert s.label == "Crashed (exit code 3: train: config error: data.path: no dataset)"
    assert no_zombie_children()


def test_stop_escalates_to_sigkill_after_the_timeout(tmp_path):
    ready = tmp_path / "trap-set"
    python = fake_program(tmp_path, f"trap '' TERM\ntouch {ready}\nwhile true; do sleep 0.1; done")
    launcher = Launcher(tmp_path / "runs", stop_timeout=1.0, python=python)
    launched = launcher.start(LONG, "simulate", "stubborn")
    run = RunDir(launched.run_dir)
    assert launcher.pending() == ["stubborn"]
    # stop only once the program ignores SIGTERM: sent earlier, the shell dies of it (a race
    # seen in CI) and there is nothing to escalate
    wait_for(ready.exists, what="the program's SIGTERM trap")
    assert "waiting up to 1 s" in launcher.stop(run)
    assert "Stopping: SIGTERM sent" in launcher.note(run.name)
    assert launched.done.wait(15) and launched.exit_code == -signal.SIGKILL
    assert "killed with SIGKILL" in launcher.note(run.name)
    s = summarise(run)
    assert s.state is RunState.STOPPED and "did not exit within 1 s of SIGTERM" in s.label


def test_a_stop_during_start_up_is_stopped_not_crashed(tmp_path):
    """Stop right after Start (or Resume) reaches a process that cannot handle SIGTERM yet (Python
    still importing): it dies of the signal, and that is the stop the user asked for."""
    python = fake_program(tmp_path, "while true; do sleep 0.1; done")   # no trap: SIGTERM kills
    launcher = Launcher(tmp_path / "runs", python=python)
    launched = launcher.start(LONG, "simulate", "early")
    run = RunDir(launched.run_dir)
    launcher.stop(run)
    assert launched.done.wait(10) and launched.exit_code == -signal.SIGTERM
    s = summarise(run)
    assert s.state is RunState.STOPPED and "stopped during start-up" in s.label


def test_a_process_killed_by_sigterm_from_elsewhere_is_crashed(tmp_path):
    python = fake_program(tmp_path, "while true; do sleep 0.1; done")
    launcher = Launcher(tmp_path / "runs", python=python)
    launched = launcher.start(LONG, "simulate", "other")
    wait_for(lambda: psutil.pid_exists(launched.pid), what="the child")
    os.killpg(launched.pid, signal.SIGTERM)
    assert launched.done.wait(10) and launched.exit_code == -signal.SIGTERM
    assert summarise(RunDir(launched.run_dir)).state is RunState.CRASHED


def test_stop_of_a_run_this_cockpit_did_not_start(tmp_path):
    out = tmp_path / "elsewhere"
    proc = subprocess.Popen([sys.executable, "-m", "bin.simulate_training", "--out", str(out),
                             "--steps", "100000", "--live", "--quiet"], cwd=ROOT,
                            start_new_session=True)
    try:
        run = RunDir(out)
        wait_for(lambda: summarise(run).state is RunState.RUNNING, what="running")
        launcher = Launcher(tmp_path, stop_timeout=20)  # a freshly started cockpit
        assert "started before this cockpit" in launcher.stop(run)
        assert proc.wait(30) == 0
        wait_for(lambda: summarise(run).state is RunState.STOPPED, 10, "stopped")
        with pytest.raises(LaunchError, match="not running"):
            launcher.stop(run)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_train_runner_needs_bin_train(tmp_path):
    ok, why = trainer_available(tmp_path)
    assert not ok and "bin/train.py does not exist" in why
    launcher = Launcher(tmp_path / "runs", root=tmp_path)
    assert launcher.runner_options()[0]["disabled"] is True
    with pytest.raises(LaunchError, match="cannot train"):
        launcher.start(LONG, "train")
    with pytest.raises(LaunchError, match="rate"):
        launcher.start(LONG, "simulate", rate=0)
