"""The page pulse's next value (gui/callbacks/tick_callbacks.next_pulse): a change refreshes the
visible tab, except one made only by selecting another run (its own listeners already ran)."""
import pytest
from dash.exceptions import PreventUpdate

from gui.callbacks.tick_callbacks import next_pulse


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
