"""The run recorder's start and resume writes to metrics.db."""
from __future__ import annotations

from pathlib import Path

import pytest

from umoec import config as C
from umoec.metrics import read as q
from umoec.metrics.db import TrainingDB
from umoec.run import RunDir
from umoec.run import recorder as R

TIER1 = Path(__file__).parents[3] / "configs" / "tier1_micro.yaml"


def test_a_resume_drops_newer_rows_and_logs_its_event_together_or_not_at_all(tmp_path,
                                                                             monkeypatch):
    """A process killed between dropping the rows past the checkpoint and writing the resume
    event must leave neither: else the history skips a resume (seen as a flaky kill test)."""
    run = RunDir(tmp_path / "r")
    with TrainingDB(run.db_path) as db:
        for step in (1, 2, 3, 4):
            db.insert_val(step, loss=1, bpb=1, n_bytes=1)
    cfg = C.load(TIER1)

    def killed(*_a, **_k):
        raise SystemExit(-9)  # the process dies inside the resume transaction

    rec = R.RunRecorder(run, cfg, 10)
    monkeypatch.setattr(rec.db, "insert_event", killed)
    with pytest.raises(SystemExit):
        rec.start(resume_step=2)
    rec.db.close()
    with q.open_db(run.db_path) as conn:
        assert q.val_metrics(conn)["step"].tolist() == [1, 2, 3, 4]
        assert q.run_events(conn).empty

    monkeypatch.undo()
    rec = R.RunRecorder(run, cfg, 10)
    rec.start(resume_step=2)
    rec.finish(R.RunState.COMPLETED, "done")
    with q.open_db(run.db_path) as conn:
        assert q.val_metrics(conn)["step"].tolist() == [1, 2]
        events = q.run_events(conn)
    assert events.loc[events["kind"] == "resume", "step"].tolist() == [2]
