"""The controls the job tabs share: the profile choices, labelled columns, the model and
checkpoint dropdowns (kept up to date by checkpoint_picker.py), a job's buttons, progress bar and
results table."""
from __future__ import annotations

import dash_bootstrap_components as dbc
from dash import dcc, html

from umoec.compress import profiles

AUTO_LABEL = (f"{profiles.AUTO} - per 8 MiB frame, {profiles.AUTO_NETWORK} or cm (the mixing "
              "stage alone), whichever codes a sample smaller: cm on binaries and tables of numbers")


def profile_options(auto: bool = True) -> list[dict]:
    """The codec's profiles, and auto unless `auto` is False (an evaluation measures a model, so
    it never lets auto leave the network out)."""
    return [{"label": f"{name} - {p.description}", "value": name}
            for name, p in profiles.PROFILES.items()] + \
        ([{"label": AUTO_LABEL, "value": profiles.AUTO}] if auto else [])


def labelled(label: str, control, width: int = 12, note: str = "") -> dbc.Col:
    return dbc.Col([dbc.Label(label, class_name="small text-muted mb-1"), control]
                   + ([html.Div(note, className="form-text")] if note else []), md=width)


def model_controls(model_id: str, note_id: str, checkpoint_id: str, what: str) -> list:
    """The model dropdown (filled by checkpoint_picker.register_model_dropdown) and the run's
    checkpoint dropdown it enables."""
    return [
        dbc.Row([
            labelled("Coding model", dcc.Dropdown(
                id=model_id, options=[], clearable=False,
                placeholder="no model found"), 12,
                f"The shipped default {what} right away, without training; models exported from "
                "runs (Training tab, Export model) and your model store are listed too."),
        ], class_name="g-2 mt-1"),
        html.Div(id=note_id, className="form-text text-warning"),
        dbc.Row([
            labelled("Checkpoint of the selected run", dcc.Dropdown(
                id=checkpoint_id, options=[], clearable=False, disabled=True,
                placeholder="no checkpoints"), 6,
                "used when the model is 'a checkpoint of run ...'; exported to "
                "RUN/models/stepNNNNNN.umm first"),
        ], class_name="g-2 mt-1"),
    ]


def progress_bar(component_id: str) -> dbc.Progress:
    return dbc.Progress(id=component_id, value=0, striped=True, animated=True,
                        style={"display": "none", "height": "20px"}, class_name="my-2")


def field(label: str, control, **col) -> dbc.Col:
    """A small label over a control (a form column; `col`: its widths)."""
    return dbc.Col([dbc.Label(label, html_for=control.id, class_name="small mb-0"), control], **col)


def job_buttons(start: str, start_id: str, cancel_id: str, *, cancel: str = "Cancel",
                colour: str = "primary", cancel_colour: str = "secondary", disabled: bool = False,
                class_name: str = "mt-3") -> html.Div:
    """A job's start button and its Cancel button (disabled until a job runs)."""
    return html.Div([
        dbc.Button(start, id=start_id, color=colour, size="sm", class_name="me-2", disabled=disabled),
        dbc.Button(cancel, id=cancel_id, color=cancel_colour, size="sm", outline=True, disabled=True),
    ], className=class_name)


def results_table(table_id: str) -> html.Div:
    return html.Div(dbc.Table(id=table_id, size="sm", hover=True, class_name="mb-0 small align-middle"),
                    className="table-responsive")
