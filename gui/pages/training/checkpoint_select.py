"""Selecting a checkpoint from the Training tab's loss chart.

A click on a checkpoint marker (its customdata is the file name) writes
common.SELECTED_CHECKPOINT = {"run", "checkpoint", "ts"} and says so under the chart. Every
checkpoint picker (gui/panes.PICKERS) applies it once, when its own tab is shown, and keeps its
stamp (common.pick_seen), so a pick the user makes afterwards wins until the next click. A Forge
run's markers only say that its checkpoints cannot be resumed or coded here.
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import dash_bootstrap_components as dbc
from dash import Input, Output, State, no_update
from dash.exceptions import PreventUpdate

from ... import ids as common
from ...context import AppContext
from ...services.forge import resolve_forge
from ...services.runs import resolve, summarise
from ...view.checkpoints import clicked_file
from . import ids
from .layout import checkpoint_hint


def _note(text: str, colour: str) -> dbc.Alert:
    return dbc.Alert(text, color=colour, class_name="py-1 px-2 mb-0 small")


def select_checkpoint(runs_dir: Path, name: str | None, click: Any,
                      now: float | None = None) -> tuple[Any, Any]:
    """(store value or no_update, note under the chart) for a click on the loss chart."""
    file = clicked_file(click)
    if file is None:
        raise PreventUpdate  # a click on a curve, not on a marker
    run = resolve(runs_dir, name)
    if run is None:
        if resolve_forge(runs_dir, name) is not None:
            return no_update, _note(f"{file} is a Forge checkpoint: Forge checkpoints cannot be "
                                    "resumed or coded here (resume the run with forge train "
                                    "--resume).", "secondary")
        raise PreventUpdate
    steps = {c.path.name: c.step for c in run.checkpoints()}
    if file not in steps:
        return no_update, _note(f"{file} is no longer in {run.checkpoints_dir}.", "warning")
    text = f"step {steps[file]:,} checkpoint selected for resume, compression, evaluation and generation"
    if summarise(run).simulated:
        text += " (a simulated run: its checkpoints hold no weights)"
    selected = {"run": name, "checkpoint": file, "ts": time.time() if now is None else now}
    return selected, _note(text + ".", "success")


def register(app, cockpit: AppContext) -> None:
    runs_dir = cockpit.settings.runs_dir

    # Two callbacks, so a run switch does not make the store an output in flight: the Training
    # charts listen to the store, and Dash held their first request until this answered.
    @app.callback(Output(common.SELECTED_CHECKPOINT, "data"),
                  Output(ids.TRAINING_CHECKPOINT_NOTE, "children", allow_duplicate=True),
                  Input(ids.TRAINING_LOSS, "clickData"), State(common.RUN_SELECT, "value"),
                  prevent_initial_call=True)
    def select(click, name):
        return select_checkpoint(runs_dir, name, click)

    @app.callback(Output(ids.TRAINING_CHECKPOINT_NOTE, "children"),
                  Input(common.RUN_SELECT, "value"), prevent_initial_call=True)
    def forget(_name):
        return checkpoint_hint()  # the note spoke of the previous run's checkpoint
