"""The page pulse's next value (gui/pages/header/ticks.next_pulse): a change refreshes the
visible tab, except one made only by selecting another run (its own listeners already ran)."""
import pytest
from dash.exceptions import PreventUpdate

from gui.pages.header.ticks import next_pulse


def test_the_first_pulse_is_a_baseline_and_an_unchanged_one_sends_nothing():
    first = next_pulse("r1:o1", None, None)
    assert first == {"sig": "r1:o1", "n": 0, "run": None, "quiet": False}
    with pytest.raises(PreventUpdate):
        next_pulse("r1:o1", None, first)


def test_selecting_a_run_is_quiet_unless_something_else_changed_too():
    first = next_pulse("r1:none", None, None)
    picked = next_pulse("r1:o1", "a", first)
    assert picked["quiet"] and picked["n"] == 1 and picked["run"] == "a"
    assert not next_pulse("r2:o2", "b", picked)["quiet"]      # a new run appeared as well


def test_the_selected_runs_own_change_refreshes():
    picked = next_pulse("r1:o1", "a", next_pulse("r1:none", None, None))
    grown = next_pulse("r1:o2", "a", picked)
    assert not grown["quiet"] and grown["n"] == 2
    assert not next_pulse("r2:o2", "a", grown)["quiet"]


def test_a_served_page_refreshes_on_its_first_tick_only_what_changed_since(tmp_path, sim_run):
    """The page is served with the pulse of the run it will most likely show (the first): the
    first tick sends nothing when nothing changed, is quiet when the browser shows another run
    (remembered) and nothing else changed, and refreshes when the run's folder changed."""
    import shutil

    from gui.context import AppContext, CockpitSettings
    from gui.pages.header.ticks import current_signature, served_pulse
    runs = tmp_path / "runs"
    for name in ("a", "b"):
        shutil.copytree(sim_run, runs / name)
    ctx = AppContext.build(CockpitSettings(
        runs_dir=runs, data_dir=tmp_path / "data", presets_dir=tmp_path / "presets",
        upload_dir=tmp_path / "uploads", max_upload_mb=1, job_timeout_s=60, stop_timeout_s=5,
        refresh_ms=2000))
    served = served_pulse(ctx, "a")
    assert served["n"] == 0 and served["run"] == "a"
    with pytest.raises(PreventUpdate):
        next_pulse(current_signature(ctx, "a"), "a", served)
    assert next_pulse(current_signature(ctx, "b"), "b", served)["quiet"]
    (runs / "a" / "training.log").write_text("one more line\n")
    changed = next_pulse(current_signature(ctx, "a"), "a", served)
    assert changed["n"] == 1 and not changed["quiet"]
