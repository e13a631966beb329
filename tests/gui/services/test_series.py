"""gui/services/series.py: the cached read of a run's training series equals a fresh read after every kind of
change a run's database goes through, and reads only the new rows while a run grows."""
from __future__ import annotations

import shutil

import pandas as pd

from gui.services.series import cached_train_series
from tests.gui.pages.training.test_callbacks import add_rows, make_run
from umoec.metrics import TrainingDB, read

COLUMNS = ("step", "bpb", "lr", "grad_norm", "tokens_per_sec")


def cached_and_fresh(run) -> tuple[pd.DataFrame, pd.DataFrame]:
    with read.open_db(run.db_path) as conn:
        return cached_train_series(conn, run.db_path, COLUMNS), read.train_series(conn, COLUMNS)


def test_a_growing_run_is_extended_with_its_new_rows_only(tmp_path, monkeypatch):
    run = make_run(tmp_path, steps=range(1, 101))
    cached, fresh = cached_and_fresh(run)
    pd.testing.assert_frame_equal(cached, fresh)
    reads = []
    real = read.train_series
    monkeypatch.setattr(read, "train_series",
                        lambda conn, cols, since_step=None: reads.append(since_step)
                        or real(conn, cols, since_step))
    with read.open_db(run.db_path) as conn:
        assert cached_train_series(conn, run.db_path, COLUMNS) is cached   # nothing new: kept
        add_rows(run, range(101, 131))
        grown = cached_train_series(conn, run.db_path, COLUMNS)
    assert reads == [100]                                # only the rows after step 100
    _, fresh = cached_and_fresh(run)
    pd.testing.assert_frame_equal(grown, fresh)
    assert len(grown) == 130


def test_a_resume_that_rewrote_rows_is_read_again(tmp_path):
    run = make_run(tmp_path, steps=range(1, 101))
    cached_and_fresh(run)
    with TrainingDB(run.db_path) as t:
        t.discard_after(80)
        t.insert_event("resume", "resumed", step=80)
    add_rows(run, [81, 82, 90, 101, 102])                 # other rows, up to a newer step
    cached, fresh = cached_and_fresh(run)
    pd.testing.assert_frame_equal(cached, fresh)
    assert list(cached["step"][-5:]) == [81, 82, 90, 101, 102]


def test_a_run_recreated_under_the_same_name_is_read_again(tmp_path):
    run = make_run(tmp_path, steps=range(1, 51))
    cached_and_fresh(run)
    shutil.rmtree(run.root)
    run = make_run(tmp_path, steps=range(1, 201, 2))     # same name, generation and more steps
    cached, fresh = cached_and_fresh(run)
    pd.testing.assert_frame_equal(cached, fresh)
    assert cached["step"].iloc[1] == 3
