"""TrainingDB writes what umoec/metrics/read.py reads, transactions are atomic, readers never see 'locked'."""
import sqlite3
import threading
import time

import pytest

from umoec.metrics import TrainingDB
from umoec.metrics import read as q


@pytest.fixture
def dbpath(tmp_path):
    return tmp_path / "metrics.db"


def test_writer_reader_round_trip(dbpath):
    with TrainingDB(dbpath) as db:
        with db.batch():
            db.insert_train_metrics(10, loss=2.0, bpb=2.885, lr=1e-3, grad_norm=0.5,
                                    tokens_per_sec=1000.0, bytes_seen=4096, elapsed_s=1.5, ts=5.0)
            db.insert_head_losses(10, {"final": 2.0, "exit_1": 2.4})
            db.insert_routing(10, [[0.75, 0.25]], [[-0.001, 0.001]], [1])
            db.insert_mod_gates(10, {2: 0.5}, 0.5, {2: 0.45})
        db.insert_val(10, loss=2.1, bpb=3.03, n_bytes=100, ts=6.0)
        db.insert_activation_stat(10, 0, mean=1.0, std=0.3, p1=0.3, p25=0.8, p50=1.0, p75=1.2,
                                  p99=1.7)
        db.insert_hidden_states(10, 0, [(0.1, 0.2), (0.3, 0.4)])
        db.insert_hidden_state(10, 1, 0, 5.0, 6.0)
        db.insert_eval_result(10, "val", bpb=3.0, compressed_bytes=375, original_bytes=1000,
                              roundtrip_ok=True, ts=7.0)
        job = db.start_compression_job("in.txt", "out.umc", "turbo", "ck.pt", ts=8.0)
        db.finish_compression_job(job, "completed", raw_bytes=1000, compressed_bytes=300,
                                  elapsed_s=0.2)
        db.insert_event("start", "hello", step=0)
    with q.open_db(dbpath) as conn:
        assert q.train_metrics(conn).to_dict("records") == [dict(
            step=10, ts=5.0, elapsed_s=1.5, loss=2.0, bpb=2.885, lr=1e-3, grad_norm=0.5,
            tokens_per_sec=1000.0, bytes_seen=4096)]
        assert q.latest_step(conn) == 10
        assert dict(zip(q.head_losses_at(conn)["head"], q.head_losses_at(conn)["loss"], strict=True)) == \
            {"final": 2.0, "exit_1": 2.4}
        r = q.moe_routing_at(conn)
        assert r[["block_idx", "expert_idx", "load"]].values.tolist() == [[1, 0, 0.75], [1, 1, 0.25]]
        assert q.mod_gates_at(conn).iloc[0].to_dict() == dict(
            step=10, block_idx=2, fraction_processed=0.5, capacity=0.5, fraction_inference=0.45)
        assert q.val_metrics(conn)["bpb"].tolist() == [3.03]
        assert q.activation_stats_at(conn)["p99"].tolist() == [1.7]
        hs = q.hidden_states_at(conn)
        assert hs[["block_idx", "sample_idx", "pc1"]].values.tolist() == \
            [[0, 0, 0.1], [0, 1, 0.3], [1, 0, 5.0]]
        assert q.hidden_states_at(conn, block_idx=1)["pc2"].tolist() == [6.0]
        assert q.eval_results(conn)["roundtrip_ok"].tolist() == [1]
        jobs = q.compression_jobs(conn)
        assert jobs.iloc[0][["status", "raw_bytes", "compressed_bytes"]].tolist() == \
            ["completed", 1000, 300]
        assert q.run_events(conn)["kind"].tolist() == ["start"]


def test_step_reads_filter_by_step_block_and_since_step(dbpath):
    with TrainingDB(dbpath) as db:
        for step in (10, 20, 30):
            db.insert_routing(step, [[0.5, 0.5], [0.9, 0.1]], [[0, 0], [0, 0]], [1, 3])
            db.insert_train_metrics(step, loss=1, bpb=1, lr=1, grad_norm=1, tokens_per_sec=1,
                                    bytes_seen=step, elapsed_s=step)
    with q.open_db(dbpath) as conn:
        assert q.logged_steps(conn, "moe_routing") == [10, 20, 30]
        assert q.logged_steps(conn, "moe_routing", since_step=10) == [20, 30]
        assert len(q.rows_at_steps(conn, "moe_routing", [10, 20, 30])) == 12
        h = q.moe_expert_history(conn, 3, 1, since_step=10)
        assert h["step"].tolist() == [20, 30] and set(h["block_idx"]) == {3}
        assert h["load"].tolist() == [0.1, 0.1]
        assert q.train_metrics(conn, since_step=20)["step"].tolist() == [30]
        assert q.moe_routing_at(conn, step=20)["step"].unique().tolist() == [20]


def test_empty_database_gives_empty_frames_with_columns(dbpath):
    TrainingDB(dbpath).close()
    with q.open_db(dbpath) as conn:
        assert q.latest_metrics(conn) is None
        for frame in (q.train_metrics(conn), q.activation_stats_at(conn), q.hidden_states_at(conn),
                      q.mod_gates_at(conn), q.eval_results(conn), q.compression_jobs(conn)):
            assert frame.empty and len(frame.columns) > 2


def test_old_database_without_new_tables_reads_as_empty(tmp_path):
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE train_metrics (step INTEGER PRIMARY KEY)")
    conn.close()
    with q.open_db(path) as conn:
        assert q.activation_stats_at(conn).empty and q.logged_steps(conn, "activation_stats") == []


def test_reader_needs_an_existing_database(tmp_path):
    with pytest.raises(FileNotFoundError), q.open_db(tmp_path / "missing.db"):
        pass
    assert not (tmp_path / "missing.db").exists()


def test_failed_batch_rolls_back(dbpath):
    with TrainingDB(dbpath) as db:
        with pytest.raises(ZeroDivisionError), db.batch():
            db.insert_val(1, loss=1, bpb=1, n_bytes=1)
            raise ZeroDivisionError("mid-batch failure")
        db.insert_val(2, loss=1, bpb=1, n_bytes=1)
    with q.open_db(dbpath) as conn:
        assert q.val_metrics(conn)["step"].tolist() == [2]


def test_discard_after_drops_newer_step_rows_only(dbpath):
    with TrainingDB(dbpath) as db:
        for step in (10, 20, 30):
            db.insert_val(step, loss=1, bpb=1, n_bytes=1)
            db.insert_hidden_states(step, 0, [(0, 0)])
        db.insert_event("checkpoint", "x", step=30)
        db.discard_after(20)
    with q.open_db(dbpath) as conn:
        assert q.val_metrics(conn)["step"].tolist() == [10, 20]
        assert q.logged_steps(conn, "hidden_states") == [10, 20]
        assert len(q.run_events(conn)) == 1  # history of events is kept


def test_concurrent_reader_never_sees_locked_or_partial_steps(dbpath):
    """A reader polls while a writer inserts step batches as fast as it can for ~2 s."""
    TrainingDB(dbpath).close()
    errors, seen = [], []
    done = threading.Event()

    def write():
        with TrainingDB(dbpath) as db:
            step = 0
            t_end = time.monotonic() + 2.0
            while time.monotonic() < t_end:
                step += 1
                with db.batch():
                    db.insert_train_metrics(step, loss=1, bpb=1, lr=1, grad_norm=1,
                                            tokens_per_sec=1, bytes_seen=step, elapsed_s=step)
                    db.insert_routing(step, [[0.25] * 4] * 4, [[0.0] * 4] * 4, [0, 1, 2, 3])
        done.set()

    def read():
        while not done.is_set():
            try:
                with q.open_db(dbpath) as conn:
                    conn.execute("BEGIN")  # one snapshot for both queries
                    last = q.latest_step(conn)
                    rows = q.rows_at_steps(conn, "moe_routing", q.logged_steps(conn, "moe_routing"))
                    conn.execute("COMMIT")
                    if last is not None:
                        assert len(rows) == 16 * last  # whole steps only
                        seen.append(last)
            except Exception as exc:
                errors.append(repr(exc))
                return

    threads = [threading.Thread(target=write), threading.Thread(target=read)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert errors == []
    assert len(seen) > 5 and seen == sorted(seen)
