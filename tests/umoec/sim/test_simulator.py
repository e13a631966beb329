"""The simulator fills every table with plausible, moving values, and behaves like a trainer."""
import csv
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from tests.conftest import ROOT, run_module
from umoec import config as C
from umoec.metrics import read as q
from umoec.run import RunDir, RunState, effective_state
from umoec.sim import curves
from umoec.sim.simulator import shape_of


@pytest.fixture(scope="module")
def run5000(tmp_path_factory):
    """Spec acceptance 13: `--steps 5000` populates all tables."""
    out = tmp_path_factory.mktemp("sim") / "r5000"
    res = run_module("bin.simulate_training", "--steps", "5000", "--out", str(out), "--quiet")
    assert res.returncode == 0, res.stderr
    return RunDir(out)


def test_every_table_is_filled(run5000):
    with q.open_db(run5000.db_path) as conn:
        counts = {t: conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in (
            "train_metrics", "head_losses", "val_metrics", "moe_routing", "mod_gates",
            "activation_stats", "hidden_states", "eval_results", "compression_jobs", "run_events",
            "system_metrics")}
    cfg = C.load(run5000.config_path)
    n_log = 5000 // cfg.logging.log_every
    assert counts["train_metrics"] == n_log
    assert counts["activation_stats"] == n_log * cfg.model.n_blocks  # every log_every
    assert counts["hidden_states"] == (n_log // 5) * cfg.model.n_blocks * 200  # every 5*log_every
    assert counts["moe_routing"] == n_log * 3 * cfg.moe.n_routed  # 'DSsS': 3 MoE blocks
    assert counts["mod_gates"] == n_log * 1  # one lower-case block
    assert counts["eval_results"] == 5000 // cfg.logging.eval_every
    assert counts["compression_jobs"] == 3 and counts["run_events"] > 10
    assert counts["system_metrics"] == n_log                    # the process, at each logged step
    with q.open_db(run5000.db_path) as conn:
        system = q.system_metrics(conn)
    assert (system["rss_bytes"] > 1e6).all() and (system["disk_free_bytes"] > 0).all()
    assert system["cpu_percent"].notna().all() and system["gpu_util"].isna().all()  # no GPU here


def test_curves_are_plausible_and_moving(run5000):
    with q.open_db(run5000.db_path) as conn:
        train, val = q.train_metrics(conn), q.val_metrics(conn)
        ev = q.eval_results(conn)
        first, last = q.moe_routing_at(conn, 10), q.moe_routing_at(conn)
        mod = q.rows_at_steps(conn, "mod_gates", q.logged_steps(conn, "mod_gates"))
        acts = q.activation_stats_at(conn)
        heads = q.head_losses_at(conn)
    assert train["bpb"].iloc[:5].mean() > 6 and train["bpb"].iloc[-20:].mean() < 3.5
    assert val["bpb"].iloc[0] - val["bpb"].iloc[-1] > 1.5
    assert (val["bpb"].diff().dropna() < 0).mean() > 0.8  # mostly falling, with noise
    assert ev["bpb"].iloc[-1] < ev["bpb"].iloc[0] and set(ev["roundtrip_ok"]) == {1}
    assert train["lr"].nunique() > 100 and train["grad_norm"].std() > 0
    for frame in (first, last):  # loads are fractions of routed slots per block
        assert np.allclose(frame.groupby("block_idx")["load"].sum(), 1.0)

    def spread(f):  # mean max/min load ratio over blocks
        return f.groupby("block_idx")["load"].agg(lambda s: s.max() / s.min()).mean()
    assert spread(first) > 2 * spread(last)  # the balancing bias evens the load out
    assert (last["bias"].abs() > 0).all()
    assert abs(mod["fraction_processed"].mean() - 0.5) < 0.02 and mod["fraction_processed"].std() > 0
    ordered = acts[["p1", "p25", "p50", "p75", "p99"]].to_numpy()
    assert (np.diff(ordered, axis=1) > 0).all() and acts["mean"].between(0.8, 1.6).all()
    assert set(heads["head"]) == {"final", "exit_1", "mtp_1", "cascade"}
    assert heads.set_index("head")["loss"]["exit_1"] > heads.set_index("head")["loss"]["final"]


def test_hidden_states_separate_with_depth(run5000):
    with q.open_db(run5000.db_path) as conn:
        hs = q.hidden_states_at(conn)
    radius = hs.assign(r=np.hypot(hs["pc1"], hs["pc2"])).groupby("block_idx")["r"].mean()
    assert radius.is_monotonic_increasing and radius.iloc[-1] > 2 * radius.iloc[0]


def test_logs_status_and_checkpoints(run5000):
    rows = list(csv.DictReader(run5000.csv_path.open()))
    assert list(rows[0]) == ["step", "loss", "lr", "grad_norm", "tokens_per_sec", "val_loss",
                             "elapsed_s"]
    assert len(rows) == 500 and rows[0]["val_loss"] == "-1.000000"
    assert any(float(r["val_loss"]) > 0 for r in rows)
    assert "step   5000 | loss" in run5000.log_path.read_text()
    assert [c.step for c in run5000.checkpoints()] == list(range(500, 5001, 500))
    status = run5000.read_status()
    assert status.state == "completed" and status.step == 5000 and status.kind == "simulate"


def test_values_are_pure_functions_of_seed_and_step():
    shape = shape_of(C.Config())
    assert curves.train_bpb(shape, 123) == curves.train_bpb(shape, 123)
    assert np.array_equal(curves.routing(shape, 50)[0], curves.routing(shape, 50)[0])
    assert curves.train_bpb(shape, 123) != curves.train_bpb(shape, 124)


def sim(out, *args):
    return run_module("bin.simulate_training", "--out", str(out), "--quiet", *args)


def test_crash_then_resume_reproduces_the_uninterrupted_run(tmp_path):
    common = ["--steps", "300", "--set", "logging.save_every=100", "--set", "logging.log_every=5"]
    assert sim(tmp_path / "whole", *common).returncode == 0
    crashed = sim(tmp_path / "cut", *common, "--crash-at", "250")
    assert crashed.returncode == 1 and "simulated crash at step 250" in crashed.stderr
    state, detail = effective_state(RunDir(tmp_path / "cut").read_status())
    assert state is RunState.CRASHED and detail.startswith("exit code 1")
    resumed = sim(tmp_path / "cut", "--steps", "300", "--resume",
                  str(tmp_path / "cut" / "checkpoints" / "step000200.pt"))
    assert resumed.returncode == 0, resumed.stderr
    with q.open_db(tmp_path / "whole" / "metrics.db") as a, \
            q.open_db(tmp_path / "cut" / "metrics.db") as b:
        cols = ["step", "loss", "lr", "grad_norm", "bytes_seen", "elapsed_s"]
        assert q.train_metrics(a)[cols].equals(q.train_metrics(b)[cols])
        routing = [q.rows_at_steps(c, "moe_routing", q.logged_steps(c, "moe_routing")) for c in (a, b)]
        assert routing[0][["load", "bias"]].equals(routing[1][["load", "bias"]])
        assert "resume" in q.run_events(b)["kind"].tolist()


def test_sigterm_in_live_mode_checkpoints_and_stops(tmp_path):
    out = tmp_path / "live"
    proc = subprocess.Popen([sys.executable, "-m", "bin.simulate_training", "--out", str(out),
                             "--steps", "100000", "--live", "--rate", "200", "--quiet"],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    run = RunDir(out)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        s = run.read_status() if run.status_path.exists() else None
        if s and s.step >= 20:
            break
        time.sleep(0.1)
    assert effective_state(run.read_status())[0] is RunState.RUNNING
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    status = run.read_status()
    assert status.state == "stopped" and "signal 15" in status.message
    assert run.latest_checkpoint().step == status.step >= 20


def test_stall_stops_the_heartbeat_but_not_the_process(tmp_path):
    out = tmp_path / "stall"
    proc = subprocess.Popen([sys.executable, "-m", "bin.simulate_training", "--out", str(out),
                             "--steps", "1000", "--live", "--rate", "100", "--stall-at", "5",
                             "--quiet"], cwd=ROOT)
    run = RunDir(out)
    try:
        deadline = time.monotonic() + 60
        while not run.status_path.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(1.0)
        before = run.read_status()
        time.sleep(3.0)
        after = run.read_status()
        assert after.updated_at == before.updated_at and proc.poll() is None
        state, _ = effective_state(after, now=after.updated_at + 31)
        assert state is RunState.STALLED
    finally:
        proc.terminate()
        proc.wait(30)
    assert run.read_status().state == "stopped"


def test_refuses_to_overwrite_a_run_and_bad_resumes(tmp_path, sim_run):
    res = sim(sim_run, "--steps", "10")
    assert res.returncode == 2 and "already holds a run" in res.stderr
    assert "Traceback" not in res.stderr
    res = sim(tmp_path / "new", "--steps", "10", "--resume", str(tmp_path / "x.pt"))
    assert res.returncode == 2 and "no run to resume" in res.stderr
    res = sim(sim_run, "--steps", "700", "--resume", str(tmp_path / "missing.pt"))
    assert res.returncode == 1 and "does not exist" in res.stderr
    res = sim(tmp_path / "n2", "--steps", "10", "--set", "moe.top_k=9")
    assert res.returncode == 2 and "moe.top_k=9 must be <= moe.n_routed=8" in res.stderr
