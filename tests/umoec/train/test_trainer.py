"""The trainer end to end on CPU: metrics, exact resume, clean stop, DDP, clear refusals."""
import os
import signal
import subprocess
import sys
import time
import warnings

import pytest

from tests.conftest import ROOT, run_module
from tests.umoec.train.conftest import tiny_args
from umoec.metrics import read as q
from umoec.run import RunDir


def train(out, data, steps, *extra, env=None):
    return run_module("bin.train", "--out", str(out), *tiny_args(data, steps), *extra,
                      timeout=600, env=env)


def test_tiny_run_fills_every_table(tmp_path, small_data):
    res = train(tmp_path / "r", small_data, 12)
    assert res.returncode == 0, res.stderr
    run = RunDir(tmp_path / "r")
    with q.open_db(run.db_path) as conn:
        train_rows = q.train_metrics(conn)
        assert train_rows["step"].tolist() == [2, 4, 6, 8, 10, 12]
        assert set(q.head_losses_at(conn)["head"]) >= {"final", "exit_1", "mtp_1", "cascade"}
        routing = q.moe_routing_at(conn)
        assert sorted(routing["block_idx"].unique()) == [1, 2]  # 'DSs': blocks 1 and 2 are MoE
        assert routing.groupby("block_idx")["load"].sum().round(5).tolist() == [1.0, 1.0]
        assert q.mod_gates_at(conn)["block_idx"].tolist() == [2]
        assert q.val_metrics(conn)["step"].tolist() == [6, 12]
        assert len(q.activation_stats_at(conn)) == 3
        assert len(q.hidden_states_at(conn)) == 3 * 200
        system = q.system_metrics(conn)
        assert system["step"].tolist() == [2, 4, 6, 8, 10, 12] and (system["rss_bytes"] > 0).all()
    assert [c.step for c in run.checkpoints()] == [4, 8, 12]
    status = run.read_status()
    assert status.state == "completed" and status.kind == "train" and status.exit_code == 0
    assert run.csv_path.read_text().count("\n") == 7
    assert "checkpoint saved" in run.log_path.read_text()


def test_stop_and_resume_reproduce_the_uninterrupted_losses(tmp_path, small_data):
    # a fixed thread count: with threads chosen from the load, float sums could differ
    fixed = ("--set", "hardware.threads=2")
    assert train(tmp_path / "whole", small_data, 12, *fixed).returncode == 0
    cut = train(tmp_path / "cut", small_data, 12, "--stop-at", "8", *fixed)
    assert cut.returncode == 0, cut.stderr
    assert RunDir(tmp_path / "cut").read_status().state == "stopped"
    resumed = train(tmp_path / "cut", small_data, 12, "--resume",
                    str(tmp_path / "cut" / "checkpoints" / "step000008.pt"), *fixed)
    assert resumed.returncode == 0, resumed.stderr
    with q.open_db(tmp_path / "whole" / "metrics.db") as a, \
            q.open_db(tmp_path / "cut" / "metrics.db") as b:
        cols = ["step", "loss", "lr", "grad_norm", "bytes_seen"]
        assert q.train_metrics(a)[cols].equals(q.train_metrics(b)[cols])
        assert q.val_metrics(a)["loss"].equals(q.val_metrics(b)["loss"])
        routing = [q.rows_at_steps(c, "moe_routing", q.logged_steps(c, "moe_routing")) for c in (a, b)]
        assert routing[0]["bias"].equals(routing[1]["bias"])


def test_sigterm_finishes_the_step_saves_and_stops(tmp_path, small_data):
    out = tmp_path / "sig"
    proc = subprocess.Popen([sys.executable, "-m", "bin.train", "--out", str(out),
                             *tiny_args(small_data, 100000)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    run = RunDir(out)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if run.status_path.exists() and run.read_status().step >= 3:
            break
        time.sleep(0.2)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    status = run.read_status()
    assert status.state == "stopped" and "signal 15" in status.message
    assert run.latest_checkpoint().step == status.step >= 3


def test_refusals_are_one_line(tmp_path, small_data):
    res = train(tmp_path / "a", small_data, 4, "--set", "training.precision=bf16+fp8")
    assert res.returncode == 1 and "bf16+fp8 is not implemented" in res.stderr
    res = train(tmp_path / "b", small_data, 4, "--set", "hardware.gpus=1")
    assert res.returncode == 1 and "no CUDA GPU is visible" in res.stderr
    res = train(tmp_path / "c", tmp_path / "no-data", 4)
    assert res.returncode == 2 and "bin.prepare_data --out" in res.stderr
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"PK\x03\x04 not really a checkpoint")
    (tmp_path / "d").mkdir()
    res = train(tmp_path / "d", small_data, 4, "--resume", str(bad))
    assert res.returncode == 2 and "damaged or truncated" in res.stderr
    for r in (res,):
        assert "Traceback" not in r.stderr


def test_resume_refuses_a_different_network(tmp_path, small_data):
    assert train(tmp_path / "r", small_data, 4).returncode == 0
    res = train(tmp_path / "r", small_data, 8, "--set", "model.d_model=48", "--resume",
                str(tmp_path / "r" / "checkpoints" / "step000004.pt"))
    assert res.returncode == 1 and "model.d_model: 32 (checkpoint) != 48 (config)" in res.stderr


@pytest.mark.slow
def test_ddp_two_cpu_processes_match_one_process(tmp_path, small_data):
    """torchrun, 2 ranks, gloo: same first-step loss as one process on the same global batch,
    rank 0 alone writes the run."""
    env = {"OMP_NUM_THREADS": "1"}
    single = train(tmp_path / "one", small_data, 2, "--set", "training.batch_size=4", env=env)
    assert single.returncode == 0, single.stderr
    two = None
    for attempt in range(2):
        two = tmp_path / f"two-{attempt}"
        cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node=2",
               "--master_port", str(29500 + (os.getpid() + 500 * attempt) % 1000), "-m",
               "bin.train", "--out", str(two), *tiny_args(small_data, 2, "training.batch_size=2")]
        res = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600,
                             env={**os.environ, **env})
        # A rank aborting inside torch/gloo's C++ ("terminate called without an active
        # exception", SIGABRT) was seen in 3 of 39 launches on 2026-11-30 and in none of 130
        # since (docs/training.md); one relaunch, said as a warning so that a CI log shows it, and
        # any other failure or a second abort fails the test.
        if res.returncode == 0 or "terminate called" not in res.stderr:
            break
        warnings.warn(f"a DDP rank aborted inside gloo; relaunching once: {res.stderr[-300:]}",
                      stacklevel=1)
    assert res.returncode == 0, res.stderr[:2000] + "\n...\n" + res.stderr[-2000:]
    with q.open_db(tmp_path / "one" / "metrics.db") as a, \
            q.open_db(two / "metrics.db") as b:
        la, lb = q.train_metrics(a), q.train_metrics(b)
        assert lb["bytes_seen"].tolist() == la["bytes_seen"].tolist()
        assert abs(la["loss"].iloc[0] - lb["loss"].iloc[0]) < 1e-4
    assert "2 process(es)" in (two / "training.log").read_text()


def _free_port() -> int:
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_ddp_across_two_machines_rank_zero_writes_the_run(tmp_path, small_data):
    """torchrun --nnodes=2 as on two machines (here two launchers of one process each, meeting at
    127.0.0.1): the same first-step loss as one process, and only the first machine's --out
    holds a run (the second machine writes nothing)."""
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    single = train(tmp_path / "one", small_data, 2, "--set", "training.batch_size=4",
                   env={"OMP_NUM_THREADS": "1"})
    assert single.returncode == 0, single.stderr
    for attempt in range(2):
        port, procs = _free_port(), []
        for node in (0, 1):
            cmd = [sys.executable, "-m", "torch.distributed.run", "--nnodes=2",
                   f"--node_rank={node}", "--nproc_per_node=1", "--master_addr=127.0.0.1",
                   f"--master_port={port}", "-m", "bin.train",
                   "--out", str(tmp_path / f"{attempt}-node{node}"),
                   *tiny_args(small_data, 2, "training.batch_size=2")]
            procs.append(subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                                          stderr=subprocess.PIPE, text=True))
        errs = [p.communicate(timeout=600)[1] for p in procs]
        rcs = [p.returncode for p in procs]
        # the gloo abort of test_ddp_two_cpu_processes_match_one_process: one relaunch, said
        if rcs == [0, 0] or not any("terminate called" in e for e in errs):
            break
        warnings.warn("a DDP rank aborted inside gloo; relaunching once", stacklevel=1)
    assert rcs == [0, 0], "\n---\n".join(e[-2000:] for e in errs)
    first, second = tmp_path / f"{attempt}-node0", tmp_path / f"{attempt}-node1"
    with q.open_db(tmp_path / "one" / "metrics.db") as a, q.open_db(first / "metrics.db") as b:
        la, lb = q.train_metrics(a), q.train_metrics(b)
        assert lb["bytes_seen"].tolist() == la["bytes_seen"].tolist()
        assert abs(la["loss"].iloc[0] - lb["loss"].iloc[0]) < 1e-4
    assert "2 process(es)" in (first / "training.log").read_text()
    assert not second.exists() or not any(second.iterdir())


@pytest.mark.slow
def test_tier1_micro_learns_the_default_corpus(tmp_path, small_data):
    """The real tier1_micro preset (batch 8), 40 steps on the stdlib corpus: val bpb far below 8
    (~3.2 at step 40, ~3.8 at step 20; 8 bits is a byte's cost knowing nothing)."""
    out = tmp_path / "t1"
    res = run_module("bin.train", "--config", "configs/tier1_micro.yaml", "--out", str(out),
                     "--quiet", "--set", f"data.path={small_data}", "--set", "training.steps=40",
                     "--set", "training.warmup_steps=5", "--set", "logging.eval_every=20",
                     "--set", "logging.save_every=40", "--set", "training.batch_size=8", timeout=900)
    assert res.returncode == 0, res.stderr
    with q.open_db(out / "metrics.db") as conn:
        val = q.val_metrics(conn)
        assert val["step"].tolist() == [20, 40]
        assert val["bpb"].iloc[-1] < 4.0 < 8.0
        assert val["bpb"].iloc[-1] < val["bpb"].iloc[0]
        for table in ("moe_routing", "mod_gates", "activation_stats", "hidden_states",
                      "head_losses"):
            assert conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0] > 0, table
