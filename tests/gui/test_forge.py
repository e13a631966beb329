"""Forge run folders, read-only: log.csv parsed by its header with every documented edge case,
checkpoints listed, folders found only inside the runs folder or when opened by path, and the
Training tab's Forge view."""
import math

import numpy as np
import pytest
from dash import no_update

from gui import forge
from gui.pages.training.callbacks import training_update
from tests.gui.forge_fixtures import HEADER6, HEADER7, row, write_forge_run


def text(*lines, end="\n"):
    return "\n".join(lines) + end


# -- log.csv ----------------------------------------------------------------------------------
def test_seven_columns_with_evaluations_marked_by_minus_one():
    log = forge.parse_log_csv(text(HEADER7, row(0, 0.0), row(48, 24.0), row(49, 24.5), row(50, 25.0)))
    assert log.columns == tuple(HEADER7.split(","))
    assert list(log.train["step"]) == [0, 48, 49, 50]
    assert list(log.val["step"]) == [49]                        # val_loss=-1 elsewhere: no eval
    assert log.val["val_loss"].iloc[0] == pytest.approx(float(row(49).split(",")[5]))
    assert log.has_elapsed and log.train["elapsed_s"].iloc[-1] == 25.0
    assert log.skipped == 0 and log.resumes == 0 and not log.partial_tail


def test_six_column_log_of_an_older_build_has_no_time():
    log = forge.parse_log_csv(text(HEADER6, row(0), row(1)))
    assert list(log.train["step"]) == [0, 1] and not log.has_elapsed
    assert log.train["elapsed_s"].isna().all()


def test_columns_are_found_by_name_not_position():
    log = forge.parse_log_csv(text("loss,step,val_loss,lr,grad_norm,tokens_per_sec,elapsed_s",
                                   "3.5,10,-1,1e-3,0.5,100,1.0", "3.4,11,3.9,1e-3,0.5,100,2.0"))
    assert list(log.train["step"]) == [10, 11] and list(log.train["loss"]) == [3.5, 3.4]
    assert list(log.val["step"]) == [11]


def test_header_missing_is_read_by_field_count():
    log7 = forge.parse_log_csv(text(row(0, 1.0), row(1, 2.0)))
    assert log7.has_elapsed and list(log7.train["step"]) == [0, 1]
    assert any("no header" in n for n in log7.notes)
    log6 = forge.parse_log_csv(text(row(0), row(1)))
    assert not log6.has_elapsed
    with pytest.raises(forge.ForgeFormatError, match="6 or 7"):
        forge.parse_log_csv("1,2,3\n")


def test_resume_appended_without_header_supersedes_the_dead_attempt():
    # first attempt reached step 5 and died; resumed from the checkpoint at step 3
    lines = [HEADER7] + [row(s, s * 1.0) for s in range(6)] + [row(s, (s - 3) * 1.0 + 0.5)
                                                               for s in range(3, 8)]
    log = forge.parse_log_csv(text(*lines))
    assert list(log.train["step"]) == list(range(8))            # one row per step
    assert log.resumes == 1 and log.superseded == 3             # old rows 3, 4, 5 replaced
    # the resumed rows win (their elapsed restarted at 0.5), and time keeps growing
    elapsed = log.train["elapsed_s"].to_numpy()
    assert np.all(np.diff(elapsed) > 0)
    assert elapsed[3] == pytest.approx(2.0 + 0.5)               # joined after step 2's 2.0 s


def test_resume_before_the_last_rows_drops_rows_the_new_run_has_not_reached():
    lines = [HEADER7] + [row(s, float(s)) for s in range(10)] + [row(s, float(s)) for s in (4, 5)]
    log = forge.parse_log_csv(text(*lines))
    assert list(log.train["step"]) == [0, 1, 2, 3, 4, 5]        # 6..9 were the dead attempt's


def test_partial_last_line_is_left_for_the_next_read():
    log = forge.parse_log_csv(text(HEADER7, row(0, 0.0), row(1, 1.0)) + "2,3.1,3.6")
    assert list(log.train["step"]) == [0, 1] and log.partial_tail


def test_malformed_lines_are_skipped_and_counted_but_nan_loss_is_kept():
    log = forge.parse_log_csv(text(HEADER7, row(0, 0.0), "garbage", "1,abc,1e-3,0.5,100,-1,1.0",
                                   "", "2,nan,1e-3,0.5,100,-1,2.0", "3,2.5,1e-3,0.5,100,-1,3.0,extra,x",
                                   HEADER7, row(4, 4.0)))
    assert list(log.train["step"]) == [0, 2, 4]
    assert math.isnan(log.train["loss"].iloc[1])                # a diverged loss is data
    assert log.skipped == 3


def test_a_repeated_header_in_an_otherwise_clean_file():
    log = forge.parse_log_csv(text(HEADER7, row(0, 0.0), HEADER7, row(1, 1.0)))
    assert list(log.train["step"]) == [0, 1] and log.skipped == 0


def test_crlf_and_a_six_column_log_continued_by_a_seven_column_build():
    lines = [HEADER6, row(0), row(1), row(2, 2.0), row(3, 3.0)]
    log = forge.parse_log_csv("\r\n".join(lines) + "\r\n")
    assert list(log.train["step"]) == [0, 1, 2, 3] and log.skipped == 0
    assert log.train["elapsed_s"].isna().tolist() == [True, True, False, False]


def test_empty_and_headerless_garbage():
    assert forge.parse_log_csv("").train.empty
    assert forge.parse_log_csv(HEADER7 + "\n").train.empty
    with pytest.raises(forge.ForgeFormatError, match="lacks step"):
        forge.parse_log_csv("time,value\n1,2\n")


def test_large_log_takes_the_fast_path_and_matches_the_slow_one():
    lines = [HEADER7] + [row(s, s * 0.1) for s in range(3000)]
    fast = forge.parse_log_csv(text(*lines))
    slow = forge.parse_log_csv(text(*lines[:1500], "", *lines[1500:]))   # a blank line: slow path
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
    assert any("no_ckpt" in o["value"] for o in forge.forge_options(tmp_path))
    (tmp_path / "other").mkdir()                # someone else's log.csv, no checkpoint: not
    (tmp_path / "other" / "log.csv").write_text("epoch,accuracy\n1,0.5\n")
    assert not forge.is_forge_dir(tmp_path / "other")
    assert forge.is_forge_dir(tmp_path / "other", need_checkpoint=False)
    (run / "status.json").write_text("{}")                      # one of ours after all
    assert not forge.is_forge_dir(run)


def test_only_runs_dir_children_or_opened_folders_resolve(tmp_path):
    runs = tmp_path / "runs"
    write_forge_run(runs / "inside")
    outside = write_forge_run(tmp_path / "elsewhere" / "out")
    reg = forge.ForgeRegistry()
    assert forge.resolve_forge(runs, "inside", reg).label == "inside (Forge, read-only)"
    assert forge.resolve_forge(runs, "../elsewhere/out", reg) is None
    key = forge.external_key(outside)
    assert forge.resolve_forge(runs, key, reg) is None          # not opened: not readable
    run = forge.open_path(str(outside / "log.csv"), reg)        # the log file's folder is opened
    assert run.key == key and forge.resolve_forge(runs, key, reg).path == outside.resolve()
    assert [o["value"] for o in forge.forge_options(runs, reg)] == ["inside", key]


def test_open_path_refuses_with_reasons(tmp_path, sim_run):
    reg = forge.ForgeRegistry()
    for given, reason in [("", "type the path"), (str(tmp_path / "nope"), "no such folder"),
                          (str(tmp_path), "no log.csv"), (str(sim_run), "not a Forge one")]:
        with pytest.raises(forge.ForgeFormatError, match=reason):
            forge.open_path(given, reg)
    assert reg.paths() == []


def test_parsed_log_is_cached_until_the_file_changes(tmp_path):
    run = forge.ForgeRun(write_forge_run(tmp_path / "f", steps=100), "f")
    first = run.read_log()
    assert run.read_log() is first
    with open(run.log_path, "a") as fh:
        fh.write(row(100, 50.0) + "\n")
    assert run.read_log() is not first and run.read_log().train["step"].iloc[-1] == 100


# -- the Training tab -------------------------------------------------------------------------
def test_training_tab_shows_a_forge_run_read_only(tmp_path):
    write_forge_run(tmp_path / "forge-a", steps=300, resume_from=200, resume_upto=260)
    out = training_update(tmp_path, "forge-a", 0.6, False, None)
    assert out["loss"].layout.yaxis.title.text.startswith("bits per token")
    assert [t.name for t in out["loss"].data][:3] == ["train bits/token",
                                                       "train bits/token (EMA 0.60)",
                                                       "val bits/token"]
    assert len(out["loss"].data[0].x) == 300
    assert out["ck_options"] == [] and out["ck_value"] is None  # no resume from the cockpit
    assert "ckpt_000300.bin" in str(out["checkpoints"]) and "latest" in str(out["checkpoints"])
    assert "(Forge, read-only)" in str(out["error"]) and "resume" in str(out["error"])
    assert out["log"].splitlines()[-1].startswith("299,")
    again = training_update(tmp_path, "forge-a", 0.6, False, out["state"])
    assert all(v is no_update for v in again.values())          # unchanged log: nothing sent
    # no empty checkpoint picker and Resume button above its filled checkpoint table
    from gui.pages.training.callbacks import resume_controls_class
    assert resume_controls_class(tmp_path, "forge-a") == "d-none"
    assert resume_controls_class(tmp_path, "not-there") == "d-flex align-items-center mb-2"


def test_an_unchanged_forge_run_is_not_resent_after_the_browser_kept_its_state(tmp_path):
    """The state goes through the browser, where numbers are doubles: a signature holding
    st_mtime_ns (~1.8e18 > 2**53) came back rounded, never matched, and the run was redrawn
    every tick (undoing any zoom)."""
    import json
    write_forge_run(tmp_path / "forge-a", steps=50)
    out = training_update(tmp_path, "forge-a", 0.6, False, None)
    assert out["lr"].data[0].name == "lr"              # not "lr (AdamW)": Forge's optimizer
    browser = json.loads(json.dumps(out["state"]), parse_int=lambda s: int(float(s)))
    again = training_update(tmp_path, "forge-a", 0.6, False, browser)
    assert all(v is no_update for v in again.values())


def test_compression_evaluation_and_generation_say_a_forge_run_cannot_be_used(tmp_path):
    """Not "No run selected": the run is selected, it just cannot be loaded as a model here."""
    from gui.compress_jobs import JobManager
    from gui.pages.compression.callbacks import refresh_view
    from gui.pages.evaluation.callbacks import eval_view
    from gui.pages.generate.callbacks import checkpoint_view
    write_forge_run(tmp_path / "forge-a", steps=300)
    jobs = JobManager(tmp_path)
    texts = {"compression": str(refresh_view(jobs, tmp_path, "forge-a", None, None, None)["status"]),
             "evaluation": str(eval_view(jobs, tmp_path, "forge-a", None, None)["status"]),
             "generation": str(checkpoint_view(tmp_path, "forge-a", None)["info"])}
    for what, text in texts.items():
        assert "is a Forge run" in text and f"so {what} cannot use it" in text, text
        assert "No run selected" not in text
    assert "No run selected" in str(eval_view(jobs, tmp_path, None, None, None)["status"])


def test_opened_forge_folders_are_remembered_across_restarts(tmp_path):
    store = tmp_path / "runs" / forge.OPENED_FILE
    a = write_forge_run(tmp_path / "elsewhere" / "a", steps=100)
    b = write_forge_run(tmp_path / "elsewhere" / "b", steps=100)
    reg = forge.ForgeRegistry(store)
    reg.add(a)
    reg.add(b)
    assert forge.ForgeRegistry(store).paths() == [a.resolve(), b.resolve()]   # a restart
    import shutil
    shutil.rmtree(b)                                   # gone since: not listed again
    assert forge.ForgeRegistry(store).paths() == [a.resolve()]
    store.write_text("{not json")
    assert forge.ForgeRegistry(store).paths() == []    # a damaged file costs the list, not the app
