"""The checkpoint and model dropdowns of the Compression and Evaluation tabs: kept in step with
the selected run and the model store while their tab is shown, and taking a checkpoint selected
on the loss chart (gui/view/checkpoints.py)."""
from __future__ import annotations

from pathlib import Path

from dash import Input, Output, State, ctx, no_update
from dash.exceptions import PreventUpdate

from umoec.run import RunDir

from .. import ids
from ..services import models
from ..services.runs import resolve, summarise
from ..services.uploads import format_bytes
from ..view.checkpoints import pending, pick, pick_model
from .visible import visible_only


def checkpoint_options(run: RunDir | None) -> list[dict]:
    """The run's checkpoints, newest first; simulated runs say their checkpoints hold no weights."""
    if run is None:
        return []
    note = " - simulated, no weights" if summarise(run).simulated else ""
    return [{"label": f"step {c.step:,} ({format_bytes(c.size)}){note}", "value": c.path.name}
            for c in reversed(run.checkpoints())]


def checkpoint_dropdown_view(runs_dir: Path, name, options, current, selected=None,
                             seen=None) -> tuple:
    """(options, value, seen) of a checkpoint dropdown: the run's checkpoints, the user's pick
    while it is offered, else a checkpoint selected on the loss chart that the dropdown has not
    applied yet (checkpoint_select), else the newest."""
    new = checkpoint_options(resolve(runs_dir, name))
    values = [o["value"] for o in new]
    value, new_seen = pick(selected, seen, name, values,
                           current if current in values else next(iter(values), None))
    if new == options and value == current and new_seen == seen:
        raise PreventUpdate
    return new, value, new_seen


def register_checkpoint_dropdown(app, runs_dir: Path, dropdown: str, tab: str) -> None:
    """Keep a tab's checkpoint dropdown in sync with the selected run (only while visible). The
    loss chart's selection is a State: a click happens on the Training tab, with this tab
    hidden, and is applied when this tab is opened."""
    @app.callback(Output(dropdown, "options"), Output(dropdown, "value"),
                  Output(ids.pick_seen(dropdown), "data"),
                  Input(ids.tab_tick(tab), "data"), Input(ids.RUN_SELECT, "value"),
                  Input(ids.TABS, "active_tab"), State(dropdown, "options"),
                  State(dropdown, "value"), State(ids.SELECTED_CHECKPOINT, "data"),
                  State(ids.pick_seen(dropdown), "data"))
    @visible_only(tab)
    def checkpoints(_n, name, _active, options, current, selected, seen):
        return checkpoint_dropdown_view(runs_dir, name, options, current, selected, seen)


def model_dropdown_view(runs_dir: Path, run: RunDir | None, current, options, note,
                        prefer=None) -> tuple:
    """(options, value, note) of a model dropdown: every model of the store (the shipped default
    first), then "a checkpoint of the selected run". The value stays what the user chose while it
    is still offered; else `prefer` when offered, else the default model."""
    try:
        new, default, errors = models.model_options(runs_dir, run)
    except OSError as exc:  # an unreadable store folder: say so, keep what the page has
        return no_update, no_update, f"Cannot list the models: {exc}"
    enabled = [o["value"] for o in new if not o.get("disabled")]
    fallback = default if default in enabled else next(iter(enabled), None)
    value = next((v for v in (current, prefer) if v is not None and v in enabled), fallback)
    text = models.problems_note(errors)
    if default is None:
        text = " ".join(t for t in (f"No default model: {models.default_entry()[1]}", text) if t)
    return (no_update if new == options else new, value, no_update if text == note else text)


def register_model_dropdown(app, runs_dir: Path, dropdown: str, note: str, checkpoint: str,
                            tab: str, prefer_checkpoint: bool = False) -> None:
    """Keep a tab's model dropdown in sync with the store and the selected run (while visible),
    and its checkpoint dropdown with the run, enabled only while "a checkpoint of the run" is chosen.
    prefer_checkpoint: a new run's checkpoint is chosen if it has real ones (Evaluation tab)."""
    register_checkpoint_dropdown(app, runs_dir, checkpoint, tab)

    # refreshed when the tab is shown or the run changes, not on every tick: each tick's request
    # of a hidden tab still costs the page a round trip, and on a slow machine enough of them
    # starve the sidebar's status (a model exported meanwhile shows up on the next visit)
    @app.callback(Output(dropdown, "options"), Output(dropdown, "value"), Output(note, "children"),
                  Output(ids.pick_seen(dropdown), "data"),
                  Input(ids.RUN_SELECT, "value"), Input(ids.TABS, "active_tab"),
                  State(dropdown, "options"), State(dropdown, "value"), State(note, "children"),
                  State(ids.SELECTED_CHECKPOINT, "data"), State(ids.pick_seen(dropdown), "data"))
    @visible_only(tab)
    def model_list(name, _active, options, current, text, selected, seen):
        run = resolve(runs_dir, name)
        prefer = None
        if prefer_checkpoint and run is not None and (current is None
                                                      or ctx.triggered_id == ids.RUN_SELECT):
            prefer = models.CHECKPOINT_CHOICE if has_real_checkpoints(run) else None
            current = None if ctx.triggered_id == ids.RUN_SELECT else current
        new, value, note_text = model_dropdown_view(runs_dir, run, current, options, text, prefer)
        value, new_seen = checkpoint_model_pick(run, name, options if new is no_update else new,
                                                value, selected, seen)
        if new is no_update and value == current and note_text is no_update and new_seen == seen:
            raise PreventUpdate
        return new, value, note_text, new_seen

    @app.callback(Output(checkpoint, "disabled"), Input(dropdown, "value"))
    def checkpoint_enabled(value):
        return value != models.CHECKPOINT_CHOICE


def checkpoint_model_pick(run: RunDir | None, name, options, value, selected, seen) -> tuple:
    """(value, seen) of a model dropdown: a checkpoint selected on the loss chart switches it to
    "a checkpoint of the run" once, if the run's checkpoints hold weights (a simulated run keeps
    the default model, which can code)."""
    if run is None or pending(selected, seen, name) is None or not has_real_checkpoints(run):
        return value, seen
    files = [c.path.name for c in run.checkpoints()]
    return pick_model(selected, seen, name, files, options, value)


def has_real_checkpoints(run: RunDir) -> bool:
    return bool(run.checkpoints()) and not summarise(run).simulated
