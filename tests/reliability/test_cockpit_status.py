"""The cockpit's status badge after Resume, with the real trainer started by the Launcher.

Already proven elsewhere (not repeated here): a killed trainer shows Crashed at the next refresh
(test_kill_resume.py, even before the dead process is reaped; tests/gui/test_browser_control.py
in a browser), a restarted cockpit reattaches and stops a run (test_concurrent_reading.py with the
real trainer; tests/gui/test_browser_control.py with the simulator), Stop escalates to SIGKILL
(tests/gui/services/test_launcher.py).
"""
from __future__ import annotations

import os
import signal
import time

import pytest

from gui.pages.sidebar.callbacks import status_view
from gui.services.launcher import Launcher
from gui.services.runs import summarise
from tests.reliability.conftest import record
from tests.reliability.helpers import ONE_THREAD, own_status, wait_until
from tests.umoec.train.conftest import TINY
from umoec import config as C
from umoec.run import RunDir

REFRESH_S = 2.0  # the cockpit's default --refresh-ms


def badge_text(view) -> str:
    return str(view["status"].children[0].children)


@pytest.mark.slow
def test_resumed_run_is_not_shown_crashed_while_it_starts(tmp_path, small_data, monkeypatch):
    for key, value in ONE_THREAD.items():
        monkeypatch.setenv(key, value)
    runs = tmp_path / "runs"
    launcher = Launcher(runs, stop_timeout=60)
    cfg = C.load_preset("tier1_micro", TINY + ["training.steps=100000", f"data.path={small_data}",
                                               "logging.save_every=4"])
    first = launcher.start(cfg, "train", "victim")
    run = RunDir(first.run_dir)
    try:
        wait_until(run.checkpoint_path(4).exists, 300, "the first checkpoint")
        os.kill(first.pid, signal.SIGKILL)
        assert first.done.wait(30)
        assert summarise(run).label.startswith("Crashed (exit code -9")
        second = launcher.resume(run, "step000004.pt")
        t0 = time.monotonic()
        view = status_view(runs, launcher, run.name, None)  # the first refresh after Resume
        # The Launcher writes a provisional status for the child at once; the trainer takes over.
        wait_until(lambda: run.read_status().message != "starting: resuming from "
                   "step000004.pt", 300, "the resumed trainer's own status")
        window = time.monotonic() - t0
        record("resume_status_window", {"seconds_until_trainer_status": round(window, 2),
                                        "refresh_s": REFRESH_S, "shown": badge_text(view)})
        assert own_status(run, second.pid) and second.alive
        assert not badge_text(view).startswith(("Crashed", "Stopped", "Completed")), (
            f"{badge_text(view)!r} shown for {window:.1f} s while the resumed process starts")
        assert view["stop_disabled"] is False
    finally:
        launcher.shutdown()
