"""What a checkpoint picker does with a checkpoint selected on the loss chart (the selection
itself: gui/pages/training/checkpoint_select.py): a picker applies a selection once, and only
when it offers that file for that run."""
from __future__ import annotations

from typing import Any

from ..figures.training import CHECKPOINT_TRACE
from ..services.models import CHECKPOINT_CHOICE


def pending(selected: Any, seen: Any, run: str | None) -> str | None:
    """The checkpoint file a picker of run `run` has still to apply (None: nothing new for it)."""
    if not isinstance(selected, dict) or not run or selected.get("run") != run:
        return None
    if selected.get("ts") == seen:
        return None
    return selected.get("checkpoint")


def pick(selected: Any, seen: Any, run: str | None, values: list, current: Any) -> tuple:
    """(value, seen) of a checkpoint picker of run `run` that offers `values` and shows `current`:
    the selection when it is new to the picker and offered, else `current` unchanged."""
    wanted = pending(selected, seen, run)
    if wanted is None or wanted not in values:
        return current, seen
    return wanted, selected["ts"]


def pick_model(selected: Any, seen: Any, run: str | None, files: list, options: list,
               current: Any) -> tuple:
    """(value, seen) of a model dropdown: "a checkpoint of the run" for a new selection of one of
    `files` (the run's checkpoints that hold weights), when that choice is offered."""
    enabled = [o["value"] for o in options or [] if not o.get("disabled")]
    wanted = pending(selected, seen, run)
    if wanted is None or wanted not in files or CHECKPOINT_CHOICE not in enabled:
        return current, seen
    return CHECKPOINT_CHOICE, selected["ts"]


def clicked_file(click: Any) -> str | None:
    """The checkpoint file of a click on a marker (clickData), None for a click elsewhere."""
    for point in (click or {}).get("points") or []:
        if point.get("curveNumber") == CHECKPOINT_TRACE and point.get("customdata"):
            return str(point["customdata"])
    return None
