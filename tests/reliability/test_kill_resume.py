"""SIGKILL at random moments, SIGTERM, then resume: the real trainer (tiny config, bin.train).

One run is killed again and again (5 times in CI, 20 with UMOEC_RELIABILITY_FULL=1), each time
resumed from its newest checkpoint. The moments are drawn from a seeded generator and aimed three
ways, without any hook in the trainer:
  step        a random time after a random number of new log rows (inside a step or an eval)
  checkpoint  the moment a checkpoint temp file (.stepNNNNNN.pt.*.tmp) appears: mid-write
  database    the moment metrics.db-wal changes: inside (or right after) a transaction
After every kill: every checkpoints/stepNNNNNN.pt loads, metrics.db passes integrity_check and
holds only whole steps, log.csv has no torn line, the cockpit's status logic says Crashed (even
before the dead process is reaped), and at most `save_every` steps are lost. Then a SIGTERM
(status Stopped, zero steps lost), and a last resume that completes: its metrics equal, row for
row, those of the same run trained without interruption.
"""
from __future__ import annotations

import os
import random
import re
import signal
import time
from pathlib import Path

import pytest

from gui.services.runs import summarise
from tests.reliability.conftest import full_or_ci, record
from tests.reliability.helpers import (
    TEMP_CKPT_RE,
    check_run_folder,
    resume_args,
    start_module,
    train_args,
    wait_until,
)
from umoec.metrics import read as q
from umoec.run import RunDir, RunState

KILLS = full_or_ci(20, 5)
SEED = 20261129
SAVE_EVERY = 2
SETS = ("logging.log_every=1", "logging.eval_every=10", f"logging.save_every={SAVE_EVERY}")
MODES = ("step", "checkpoint", "database")
CMP_COLUMNS = ["step", "loss", "lr", "grad_norm", "bytes_seen"]


def new_csv_steps(run: RunDir, offset: int) -> list[int]:
    """Steps of the whole log.csv lines written after byte `offset`."""
    try:
        with open(run.csv_path, "rb") as fh:
            fh.seek(offset)
            text = fh.read().decode()
    except FileNotFoundError:
        return []
    return [int(line.split(",")[0]) for line in text.split("\n")[:-1]
            if re.match(r"^\d+,", line)]


def csv_size(run: RunDir) -> int:
    try:
        return run.csv_path.stat().st_size
    except FileNotFoundError:
        return 0


def aim_step(proc, run, rng, base_step, csv_offset) -> dict:
    target = base_step + rng.randint(1, 8)
    wait_until(lambda: any(s >= target for s in new_csv_steps(run, csv_offset)), 300,
               f"step {target}", proc)
    time.sleep(rng.uniform(0, 0.05))
    os.kill(proc.pid, signal.SIGKILL)
    return {"aimed": f"{target - base_step} rows after resume + <= 50 ms"}


def temp_names(run: RunDir) -> set[str]:
    try:
        return {n for n in os.listdir(run.checkpoints_dir) if TEMP_CKPT_RE.match(n)}
    except FileNotFoundError:
        return set()


def aim_checkpoint(proc, run, rng, base_step, csv_offset) -> dict:
    """Kill while the k-th new checkpoint temp file holds a random fraction of a checkpoint."""
    k, seen = rng.randint(1, 3), temp_names(run)
    sizes = [p.stat().st_size for p in run.checkpoints_dir.glob("step*.pt")]
    want = int(rng.random() * (max(sizes) if sizes else 0))
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.popen.poll() is None:
        fresh = temp_names(run) - seen
        if fresh:
            seen |= fresh
            k -= 1
            if k == 0:
                path = run.checkpoints_dir / sorted(fresh)[0]
                size = 0
                while proc.popen.poll() is None:
                    try:
                        size = path.stat().st_size
                    except FileNotFoundError:
                        break  # renamed: the write finished before the aimed fraction
                    if size >= want:
                        break
                os.kill(proc.pid, signal.SIGKILL)
                return {"aimed": f"{path.name} at >= {want} bytes",
                        "landed_mid_write": path.exists(), "temp_bytes": size}
        time.sleep(0.0005)
    raise AssertionError(f"no checkpoint write seen: {proc.stderr()[-2000:]}")


def wal_state(run: RunDir):
    try:
        st = os.stat(run.root / "metrics.db-wal")
        return st.st_size, st.st_mtime_ns
    except FileNotFoundError:
        return None


def aim_database(proc, run, rng, base_step, csv_offset) -> dict:
    j, last = rng.randint(1, 10), wal_state(run)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.popen.poll() is None:
        now = wal_state(run)
        if now != last:
            last, j = now, j - 1
            if j == 0:
                os.kill(proc.pid, signal.SIGKILL)
                return {"aimed": "metrics.db-wal changed"}
        time.sleep(0.0005)
    raise AssertionError(f"no database write seen: {proc.stderr()[-2000:]}")


AIM = {"step": aim_step, "checkpoint": aim_checkpoint, "database": aim_database}


@pytest.mark.slow
def test_sigkill_at_random_moments_then_sigterm_then_resume_completes(tmp_path, small_data):
    rng = random.Random(SEED)
    steps = 10 * KILLS + 20   # each cycle advances <= 10 steps: the run never ends early
    logs = tmp_path / "logs"
    reference = start_module("bin.train", train_args(tmp_path / "ref", small_data, steps, *SETS),
                             logs)
    run = RunDir(tmp_path / "run")
    plan = [MODES[i % 3] for i in range(KILLS)]
    rng.shuffle(plan)
    kills, resumed_from, t0 = [], [], time.monotonic()
    newest = None
    for i, mode in enumerate(plan):
        offset = csv_size(run)
        if newest is None:
            proc = start_module("bin.train", train_args(run.root, small_data, steps, *SETS), logs)
            wait_until(lambda: run.checkpoint_path(SAVE_EVERY).exists(), 300,
                       "the first checkpoint", proc)   # before it there is nothing to resume
        else:
            proc = start_module("bin.train", resume_args(run.root, run.checkpoint_path(newest)),
                                logs)
            resumed_from.append(newest)
        info = AIM[mode](proc, run, rng, newest or 0, offset)
        os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)  # dead, not reaped yet
        zombie = summarise(run)
        assert proc.wait(30) == -signal.SIGKILL
        report = check_run_folder(run)
        assert report.problems == [], (i, mode, report.problems)
        for s in (zombie, summarise(run)):
            assert s.state is RunState.CRASHED and "gone without a final status" in s.label, s.label
        assert report.newest is not None and report.db_max_step is not None
        lost = report.db_max_step - report.newest
        assert 0 <= lost <= SAVE_EVERY, (report.db_max_step, report.newest)
        kills.append({"mode": mode, **info, "db_step": report.db_max_step,
                      "newest_checkpoint": report.newest, "steps_to_redo": lost,
                      "temp_files_left": len(report.temp_files)})
        newest = report.newest

    # SIGTERM: the step finishes, a checkpoint is saved, nothing is lost, status Stopped.
    offset = csv_size(run)
    proc = start_module("bin.train", resume_args(run.root, run.checkpoint_path(newest)), logs)
    resumed_from.append(newest)
    target = newest + rng.randint(1, 6)
    wait_until(lambda: any(s >= target for s in new_csv_steps(run, offset)), 300, "steps", proc)
    proc.popen.send_signal(signal.SIGTERM)
    assert proc.wait(120) == 0, proc.stderr()
    report = check_run_folder(run)
    assert report.problems == [] and report.state is RunState.STOPPED, report
    status = run.read_status()
    assert report.newest == status.step == report.db_max_step >= target  # zero steps lost
    newest = report.newest

    # The last resume completes, and the metrics equal an uninterrupted run's.
    proc = start_module("bin.train", resume_args(run.root, run.checkpoint_path(newest)), logs)
    resumed_from.append(newest)
    assert proc.wait(600) == 0, proc.stderr()
    assert reference.wait(600) == 0, reference.stderr()
    report = check_run_folder(run)
    assert report.problems == [] and report.state is RunState.COMPLETED
    assert report.db_max_step == steps and report.whole_steps == steps
    with q.open_db(tmp_path / "ref" / "metrics.db") as a, q.open_db(run.db_path) as b:
        assert q.train_metrics(b)[CMP_COLUMNS].equals(q.train_metrics(a)[CMP_COLUMNS])
        routing = [q.rows_at_steps(c, "moe_routing", q.logged_steps(c, "moe_routing")) for c in (b, a)]
        assert routing[0]["bias"].equals(routing[1]["bias"])
        val_a, val_b = q.val_metrics(a).set_index("step"), q.val_metrics(b).set_index("step")
        events = q.run_events(b)
    # A SIGTERM inside an evaluation skips that evaluation for good (a known bug, pinned by
    # test_sigterm_during_an_evaluation_keeps_that_evaluation below): compare the others.
    cut = {int(m) for m in re.findall(r"eval step (\d+): interrupted by signal",
                                      run.log_path.read_text())}
    assert set(val_a.index) - set(val_b.index) <= cut
    assert val_b["loss"].equals(val_a.loc[val_b.index, "loss"])
    assert events.loc[events["kind"] == "resume", "step"].tolist() == resumed_from

    temps = sorted(p.name for p in Path(run.checkpoints_dir).iterdir()
                   if TEMP_CKPT_RE.match(p.name))
    record("kill_resume", {
        "kills": len(kills), "survived": len(kills), "seed": SEED, "steps": steps,
        "save_every": SAVE_EVERY, "by_mode": {m: plan.count(m) for m in MODES},
        "checkpoint_kills_mid_write": sum(bool(k.get("landed_mid_write")) for k in kills),
        "max_steps_to_redo": max(k["steps_to_redo"] for k in kills),
        "temp_files_left_at_end": len(temps),
        "temp_bytes_left_at_end": sum((run.checkpoints_dir / n).stat().st_size for n in temps),
        "sigterm_steps_lost": 0, "final_metrics_equal_uninterrupted": True,
        "evaluations_cut_by_sigterm": sorted(cut),
        "seconds": round(time.monotonic() - t0, 1), "detail": kills})


@pytest.mark.slow
def test_sigterm_during_an_evaluation_keeps_that_evaluation(tmp_path, small_data):
    """Stop while step 10 is being evaluated, resume to the end: val rows at 10 and 12."""
    run, logs = RunDir(tmp_path / "run"), tmp_path / "logs"
    sets = ("logging.log_every=1", "logging.eval_every=10", "logging.save_every=4")
    proc = start_module("bin.train", train_args(run.root, small_data, 12, *sets), logs)

    def evaluating_step_10():  # activation_stats are written at the first validation batch
        try:
            with q.open_db(run.db_path) as conn:
                return 10 in q.logged_steps(conn, "activation_stats")
        except Exception:
            return False
    wait_until(evaluating_step_10, 300, "the evaluation of step 10", proc, interval=0.002)
    proc.popen.send_signal(signal.SIGTERM)
    assert proc.wait(120) == 0, proc.stderr()
    assert run.read_status().state == "stopped" and run.latest_checkpoint().step == 10
    if "eval step 10: interrupted by signal 15" not in run.log_path.read_text():
        pytest.skip("the SIGTERM arrived after the evaluation had finished (machine too busy)")
    proc = start_module("bin.train", resume_args(run.root, run.checkpoint_path(10)), logs)
    assert proc.wait(300) == 0, proc.stderr()
    with q.open_db(run.db_path) as conn:
        assert q.val_metrics(conn)["step"].tolist() == [10, 12]
