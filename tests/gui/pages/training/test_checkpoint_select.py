"""A click on a checkpoint marker of the loss chart selects that checkpoint in every picker of
the same run (gui/pages/training/checkpoint_select.py): the click writes the store, each picker
applies it once when its tab shows it (only for its run and a file it offers), and a pick the
user makes afterwards wins."""
import pytest
from dash import no_update
from dash.exceptions import PreventUpdate

from gui.components.checkpoint_picker import checkpoint_dropdown_view, checkpoint_model_pick
from gui.figures.training import CHECKPOINT_TRACE
from gui.pages.generate.callbacks import checkpoint_view
from gui.pages.training.callbacks import apply_selection, training_update
from gui.pages.training.checkpoint_select import select_checkpoint
from gui.services.models import CHECKPOINT_CHOICE
from tests.gui.pages.training.test_callbacks import make_run
from umoec.run import RunStatus


def with_checkpoints(runs_dir, name="r", steps=(500, 600), kind="train"):
    run = make_run(runs_dir, name)
    RunStatus(state="completed", total_steps=600, kind=kind).write(run.status_path)
    run.checkpoints_dir.mkdir()
    for s in steps:
        run.checkpoint_path(s).write_bytes(b"x" * s)
    return run


def click(file, curve=CHECKPOINT_TRACE):
    return {"points": [{"curveNumber": 1, "x": 500, "y": 2.5},
                       {"curveNumber": curve, "x": 500, "y": 0.5, "customdata": file}]}


def store(run="r", checkpoint="step000500.pt", ts=1.0):
    return {"run": run, "checkpoint": checkpoint, "ts": ts}


def test_a_marker_click_writes_the_store_and_says_what_it_selected(tmp_path):
    with_checkpoints(tmp_path)
    selected, note = select_checkpoint(tmp_path, "r", click("step000500.pt"), now=7.0)
    assert selected == store(ts=7.0)
    assert note.children == ("step 500 checkpoint selected for resume, compression, evaluation "
                             "and generation.") and note.color == "success"
    with_checkpoints(tmp_path, "sim", kind="simulate")
    _, note = select_checkpoint(tmp_path, "sim", click("step000500.pt"))
    assert "simulated run: its checkpoints hold no weights" in note.children
    with pytest.raises(PreventUpdate):                       # a click on a curve
        select_checkpoint(tmp_path, "r", click("step000500.pt", curve=0))
    selected, note = select_checkpoint(tmp_path, "r", click("step000700.pt"))  # deleted since
    assert selected is no_update and "no longer in" in note.children


def test_a_forge_marker_only_says_it_cannot_be_used_here(tmp_path):
    from tests.gui.forge_fixtures import write_forge_run
    write_forge_run(tmp_path / "forge-a", steps=250)
    selected, note = select_checkpoint(tmp_path, "forge-a", click("ckpt_000100.bin"))
    assert selected is no_update
    assert "Forge checkpoints cannot be resumed or coded here" in note.children


def test_the_resume_picker_applies_the_selection_once_then_the_users_pick_wins(tmp_path):
    with_checkpoints(tmp_path)
    out = training_update(tmp_path, "r", 0.6, False, None)
    assert out["ck_value"] == "step000600.pt"                # the newest, without a selection
    seen = apply_selection(out, "r", None, None, store(), None)
    assert out["ck_value"] == "step000500.pt" and seen == 1.0
    # the next tick: the page shows 500, the user picks 600; the same selection is not re-applied
    tick = training_update(tmp_path, "r", 0.6, False, out["state"], checkpoint="step000600.pt")
    assert apply_selection(tick, "r", out["ck_options"], "step000600.pt", store(), seen) == seen
    assert tick["ck_value"] is no_update
    # another run's selection, or a file the run does not have: nothing changes
    for other in (store(run="other"), store(checkpoint="step000700.pt")):
        fresh = training_update(tmp_path, "r", 0.6, False, None)
        assert apply_selection(fresh, "r", None, None, other, None) is None
        assert fresh["ck_value"] == "step000600.pt"


@pytest.mark.parametrize("picker", ["compression/evaluation", "generate"])
def test_the_other_tabs_pickers_apply_it_for_their_run_only(tmp_path, picker):
    with_checkpoints(tmp_path)
    with_checkpoints(tmp_path, "other")

    def view(name, current, selected, seen):
        if picker == "generate":
            v = checkpoint_view(tmp_path, name, current, selected, seen)
            return v["value"], v["seen"]
        try:
            return checkpoint_dropdown_view(tmp_path, name, None, current, selected, seen)[1:]
        except PreventUpdate:
            return current, seen

    assert view("r", None, None, None) == ("step000600.pt", None)
    assert view("r", "step000600.pt", store(), None) == ("step000500.pt", 1.0)
    # the user then picks 600: opening the tab again keeps it
    assert view("r", "step000600.pt", store(), 1.0) == ("step000600.pt", 1.0)
    assert view("r", "step000600.pt", store(ts=2.0), 1.0) == ("step000500.pt", 2.0)  # a new click
    assert view("other", "step000600.pt", store(), None) == ("step000600.pt", None)
    assert view("r", "step000600.pt", store(checkpoint="step000700.pt"), None) == \
        ("step000600.pt", None)


def test_the_model_dropdowns_switch_to_the_runs_checkpoint_when_it_holds_weights(tmp_path):
    real = with_checkpoints(tmp_path)
    sim = with_checkpoints(tmp_path, "sim", kind="simulate")
    options = [{"label": "general-v1", "value": "abc"},
               {"label": "a checkpoint of run r", "value": CHECKPOINT_CHOICE}]
    assert checkpoint_model_pick(real, "r", options, "abc", store(), None) == (CHECKPOINT_CHOICE, 1.0)
    assert checkpoint_model_pick(real, "r", options, "abc", store(), 1.0) == ("abc", 1.0)
    assert checkpoint_model_pick(real, "r", options, "abc", store(run="other"), None) == ("abc", None)
    # a simulated run's checkpoints cannot code: the default model stays
    assert checkpoint_model_pick(sim, "sim", options, "abc", store(run="sim"), None) == ("abc", None)


def test_the_resume_picker_follows_the_newest_checkpoint_unless_an_older_one_was_picked(tmp_path):
    run = with_checkpoints(tmp_path, steps=(500,))
    out = training_update(tmp_path, "r", 0.6, False, None)
    assert out["ck_value"] == "step000500.pt"
    # a stop writes a new checkpoint: the picker, showing the newest, moves to it
    run.checkpoint_path(669).write_bytes(b"x")
    moved = training_update(tmp_path, "r", 0.6, False, out["state"], checkpoint="step000500.pt")
    assert moved["ck_value"] == "step000669.pt"
    # an older checkpoint the user picked stays picked when a newer one arrives
    run.checkpoint_path(700).write_bytes(b"x")
    kept = training_update(tmp_path, "r", 0.6, False, moved["state"], checkpoint="step000500.pt")
    assert kept["ck_value"] == "step000500.pt"
