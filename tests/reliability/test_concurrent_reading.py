"""The cockpit reads while the real trainer writes as fast as it can (10 s in CI, 60 s full),
then a freshly started cockpit (a restart) finds the run, shows it Running and stops it.

Reader: what the cockpit does every refresh, back to back: a new read-only connection, one
snapshot over train_metrics / head_losses / moe_routing / mod_gates / val_metrics, plus the
Training tab's own refresh function (training_update) every 0.5 s. The trainer logs every step
(log_every=1), so "no missing rows" is exact: the steps seen are always 1..N, each whole.
"""
from __future__ import annotations

import time

import pytest

from gui.pages.sidebar.callbacks import status_view
from gui.pages.training.callbacks import training_update
from gui.services.launcher import Launcher
from gui.services.runs import summarise
from tests.reliability.conftest import full_or_ci, record
from tests.reliability.helpers import (
    check_run_folder,
    own_status,
    start_module,
    step_shape,
    train_args,
    wait_until,
)
from umoec.metrics import read as q
from umoec.run import RunDir, RunState

READ_S = full_or_ci(60, 10)
SETS = ("logging.log_every=1", "logging.eval_every=20", "logging.save_every=50")


def badge_text(view) -> str:
    return str(view["status"].children[0].children)


@pytest.mark.slow
def test_cockpit_reads_while_the_trainer_writes_then_a_restarted_cockpit_stops_it(tmp_path,
                                                                                   small_data):
    runs, logs = tmp_path / "runs", tmp_path / "logs"
    run = RunDir(runs / "busy")
    proc = start_module("bin.train", train_args(run.root, small_data, 10**6, *SETS), logs)
    wait_until(lambda: own_status(run, proc.pid) and run.db_path.exists(), 300, "the start", proc)
    polls, ticks, errors, shape, last = 0, 0, [], None, 0
    state, next_tick = None, 0.0
    t0 = time.monotonic()
    while time.monotonic() - t0 < READ_S:
        assert proc.popen.poll() is None, proc.stderr()
        try:
            with q.open_db(run.db_path) as conn:
                conn.execute("BEGIN")  # one snapshot, as a refresh reads several tables
                shapes = step_shape(conn)
                val = q.val_metrics(conn)
                conn.execute("COMMIT")
        except Exception as exc:
            errors.append(repr(exc))
            break
        polls += 1
        steps = list(shapes)
        assert steps == list(range(1, len(steps) + 1)), "a logged step is missing"
        if steps:
            shape = shape or shapes[1]
            assert all(s == shape for s in shapes.values()), "a step with partial rows"
            assert steps[-1] >= last
            last = steps[-1]
        # an evaluation is committed just before its step's training rows
        assert set(val["step"]) <= set(steps) | {len(steps) + 1}
        if time.monotonic() >= next_tick:
            out = training_update(runs, run.name, 0.6, False, state)
            assert out["error"] is None, out["error"]
            if state is not None:
                assert out["state"].get("last_step", 0) >= state.get("last_step", 0)
            state, ticks, next_tick = out["state"], ticks + 1, time.monotonic() + 0.5
    assert errors == []
    assert polls > 20 and last > 20

    # A cockpit started now (the old one "restarted") reattaches and stops the run.
    launcher = Launcher(runs, stop_timeout=120)
    view = status_view(runs, launcher, run.name, None)
    assert badge_text(view).startswith("Running") and view["stop_disabled"] is False
    assert "started before this cockpit" in launcher.stop(run)
    assert proc.wait(150) == 0, proc.stderr()
    wait_until(lambda: summarise(run).state is RunState.STOPPED, 30, "Stopped")
    report = check_run_folder(run, shape)
    status = run.read_status()
    assert report.problems == [] and report.newest == status.step == report.db_max_step
    assert badge_text(status_view(runs, launcher, run.name, None)).startswith("Stopped")
    with q.open_db(run.db_path) as conn:
        elapsed = float(q.train_metrics(conn)["elapsed_s"].iloc[-1])
    record("concurrent_reading", {
        "seconds_read": READ_S, "snapshots": polls, "training_tab_refreshes": ticks,
        "steps_written": report.db_max_step, "steps_per_s": round(report.db_max_step / elapsed, 1),
        "rows_per_step": 1 + sum(shape), "errors": errors, "stopped_at": status.step,
        "steps_lost": 0})
