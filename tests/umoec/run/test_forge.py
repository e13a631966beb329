"""Forge run folders, read-only: log.csv parsed by its header with every documented edge case,
checkpoints listed, Forge folders told apart from ours."""
import math

import numpy as np
import pytest

from tests.gui.forge_fixtures import HEADER6, HEADER7, row, write_forge_run
from umoec.run import forge
from umoec.run.csvlog import parse_log_csv
from umoec.run.forge import ForgeFormatError


def text(*lines, end="\n"):
    return "\n".join(lines) + end


# -- log.csv ----------------------------------------------------------------------------------
def test_seven_columns_with_evaluations_marked_by_minus_one():
    log = parse_log_csv(text(HEADER7, row(0, 0.0), row(48, 24.0), row(49, 24.5), row(50, 25.0)))
    assert log.columns == tuple(HEADER7.split(","))
    assert list(log.train["step"]) == [0, 48, 49, 50]
    assert list(log.val["step"]) == [49]                        # val_loss=-1 elsewhere: no eval
    assert log.val["val_loss"].iloc[0] == pytest.approx(float(row(49).split(",")[5]))
    assert log.has_elapsed and log.train["elapsed_s"].iloc[-1] == 25.0
    assert log.skipped == 0 and log.resumes == 0 and not log.partial_tail


def test_six_column_log_of_an_older_build_has_no_time():
    log = parse_log_csv(text(HEADER6, row(0), row(1)))
    assert list(log.train["step"]) == [0, 1] and not log.has_elapsed
    assert log.train["elapsed_s"].isna().all()


def test_columns_are_found_by_name_not_position():
    log = parse_log_csv(text("loss,step,val_loss,lr,grad_norm,tokens_per_sec,elapsed_s",
                                   "3.5,10,-1,1e-3,0.5,100,1.0", "3.4,11,3.9,1e-3,0.5,100,2.0"))
    assert list(log.train["step"]) == [10, 11] and list(log.train["loss"]) == [3.5, 3.4]
    assert list(log.val["step"]) == [11]


def test_header_missing_is_read_by_field_count():
    log7 = parse_log_csv(text(row(0, 1.0), row(1, 2.0)))
    assert log7.has_elapsed and list(log7.train["step"]) == [0, 1]
    assert any("no header" in n for n in log7.notes)
    log6 = parse_log_csv(text(row(0), row(1)))
    assert not log6.has_elapsed
    with pytest.raises(ForgeFormatError, match="6 or 7"):
        parse_log_csv("1,2,3\n")


def test_resume_appended_without_header_supersedes_the_dead_attempt():
    # first attempt reached step 5 and died; resumed from the checkpoint at step 3
    lines = [HEADER7] + [row(s, s * 1.0) for s in range(6)] + [row(s, (s - 3) * 1.0 + 0.5)
                                                               for s in range(3, 8)]
    log = parse_log_csv(text(*lines))
    assert list(log.train["step"]) == list(range(8))            # one row per step
    assert log.resumes == 1 and log.superseded == 3             # old rows 3, 4, 5 replaced
    # the resumed rows win (their elapsed restarted at 0.5), and time keeps growing
    elapsed = log.train["elapsed_s"].to_numpy()
    assert np.all(np.diff(elapsed) > 0)
    assert elapsed[3] == pytest.approx(2.0 + 0.5)               # joined after step 2's 2.0 s


def test_resume_before_the_last_rows_drops_rows_the_new_run_has_not_reached():
    lines = [HEADER7] + [row(s, float(s)) for s in range(10)] + [row(s, float(s)) for s in (4, 5)]
    log = parse_log_csv(text(*lines))
    assert list(log.train["step"]) == [0, 1, 2, 3, 4, 5]        # 6..9 were the dead attempt's


def test_partial_last_line_is_left_for_the_next_read():
    log = parse_log_csv(text(HEADER7, row(0, 0.0), row(1, 1.0)) + "2,3.1,3.6")
    assert list(log.train["step"]) == [0, 1] and log.partial_tail


def test_malformed_lines_are_skipped_and_counted_but_nan_loss_is_kept():
    log = parse_log_csv(text(HEADER7, row(0, 0.0), "garbage", "1,abc,1e-3,0.5,100,-1,1.0",
                                   "", "2,nan,1e-3,0.5,100,-1,2.0", "3,2.5,1e-3,0.5,100,-1,3.0,extra,x",
                                   HEADER7, row(4, 4.0)))
    assert list(log.train["step"]) == [0, 2, 4]
    assert math.isnan(log.train["loss"].iloc[1])                # a diverged loss is data
    assert log.skipped == 3


def test_a_repeated_header_in_an_otherwise_clean_file():
    log = parse_log_csv(text(HEADER7, row(0, 0.0), HEADER7, row(1, 1.0)))
    assert list(log.train["step"]) == [0, 1] and log.skipped == 0


def test_crlf_and_a_six_column_log_continued_by_a_seven_column_build():
    lines = [HEADER6, row(0), row(1), row(2, 2.0), row(3, 3.0)]
    log = parse_log_csv("\r\n".join(lines) + "\r\n")
    assert list(log.train["step"]) == [0, 1, 2, 3] and log.skipped == 0
    assert log.train["elapsed_s"].isna().tolist() == [True, True, False, False]


def test_empty_and_headerless_garbage():
    assert parse_log_csv("").train.empty
    assert parse_log_csv(HEADER7 + "\n").train.empty
    with pytest.raises(ForgeFormatError, match="lacks step"):
        parse_log_csv("time,value\n1,2\n")


def test_large_log_takes_the_fast_path_and_matches_the_slow_one():
    lines = [HEADER7] + [row(s, s * 0.1) for s in range(3000)]
    fast = parse_log_csv(text(*lines))
    slow = parse_log_csv(text(*lines[:1500], "", *lines[1500:]))   # a blank line: slow path
    assert fast.train.equals(slow.train) and fast.val.equals(slow.val)


# -- folders ----------------------------------------------------------------------------------
def test_checkpoints_and_folder_detection(tmp_path):
    run = write_forge_run(tmp_path / "f", steps=250, checkpoint_every=100)
    names = [c.name for c in forge.list_checkpoints(run)]
    assert names == ["ckpt_000100.bin", "ckpt_000200.bin", "ckpt_latest.bin"]
    assert forge.is_forge_dir(run)
    (tmp_path / "no_ckpt").mkdir()              # a Forge run before its first checkpoint: shown
    (tmp_path / "no_ckpt" / "log.csv").write_text(HEADER7 + "\n0,5.5,0.001,1.0,100,-1,0.5\n")
    assert forge.is_forge_dir(tmp_path / "no_ckpt")
    (tmp_path / "other").mkdir()                # someone else's log.csv, no checkpoint: not
    (tmp_path / "other" / "log.csv").write_text("epoch,accuracy\n1,0.5\n")
    assert not forge.is_forge_dir(tmp_path / "other")
    assert forge.is_forge_dir(tmp_path / "other", need_checkpoint=False)
    (run / "status.json").write_text("{}")                      # one of ours after all
    assert not forge.is_forge_dir(run)
