"""Generate / playground tab: which checkpoint, sampling streamed into the page, and
surprisal colouring. The torch work is umoec/generate.py, imported only when a job starts, so the
cockpit starts without torch. Jobs run in the cockpit's Generation service (server threads of its
supervisor); the page polls them every 300 ms while one runs (ids.GEN_POLL / ids.SURPRISAL_POLL)
and stops polling when it ends."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import dash_bootstrap_components as dbc
from dash import Input, Output, State, html, no_update
from dash.exceptions import PreventUpdate

from umoec.run import RunDir

from ... import ids as common
from ... import surprisal
from ...components.checkpoint_picker import checkpoint_options
from ...components.visible import visible_only
from ...context import AppContext
from ...services import forge
from ...services.datasets import escape_text
from ...services.generation import Generation
from ...services.runs import resolve, summarise
from ...view.checkpoints import pick
from ..base import bad, ok
from . import ids


def _muted(text: str) -> html.Span:
    return html.Span(text, className="text-muted")


def checkpoint_view(runs_dir: Path, name: str | None, current: str | None,
                    selected: Any = None, seen: Any = None) -> dict[str, Any]:
    """The info line, the checkpoint choices and whether the buttons work, for the selected run;
    `selected`, `seen`: a checkpoint chosen on the loss chart, applied once (checkpoint_select)."""
    run = resolve(runs_dir, name)
    off = {"options": [], "value": None, "disabled": True, "seen": seen}
    if run is None:
        return {**off, "info": _muted(forge.not_usable_here(runs_dir, name, "generation")
                                      or "No run selected: choose one in the top bar.")}
    s = summarise(run)
    if s.simulated:
        return {**off, "info": dbc.Alert([html.Strong(f"{run.name} is a simulated run. "),
                "Its checkpoints hold no weights, so there is no model to sample from or score "
                "with. Train a real run (runner: Train (bin.train)) to use this tab."],
                color="secondary", class_name="small mb-0 py-2")}
    options = checkpoint_options(run)   # newest first, as the Compression tab's
    if not options:
        return {**off, "info": _muted(f"{run.name} has no checkpoint yet (one is written every "
                                      "logging.save_every steps and at the end).")}
    values = [o["value"] for o in options]
    value, seen = pick(selected, seen, name, values, current if current in values else values[0])
    info = html.Span([html.Strong(run.name), f" ({s.label}): {len(options)} checkpoint"
                      f"{'s' if len(options) > 1 else ''}. Sampling and scoring use the chosen one "
                      "in step form, as the compressor does (the checkpoint's early-exit and "
                      "cascade settings, no LoRA adaptation)."])
    return {"options": options, "value": value, "disabled": False, "info": info, "seen": seen}


def checkpoint_path(runs_dir: Path, name: str | None, checkpoint: str | None) -> Path:
    """The chosen checkpoint file, only if it is one of the run's own checkpoints."""
    run = resolve(runs_dir, name)
    if run is None:
        raise ValueError("no run selected")
    for c in RunDir(run.root).checkpoints():
        if c.path.name == checkpoint:
            return c.path
    raise ValueError(f"checkpoint {checkpoint!r} is not in {run.checkpoints_dir} (deleted?)")


# -- sampling ---------------------------------------------------------------------------------------
def _start(jobs: Generation, runs_dir: Path, name, checkpoint, previous: str | None, refused: str,
           start: Callable[[Path], Any]) -> dict[str, Any]:
    """Cancel the page's previous job and `start(checkpoint file)` a new one."""
    from umoec.generate import GenerateError  # torch: only now
    jobs.cancel(previous)
    try:
        path = checkpoint_path(runs_dir, name, checkpoint)
        job = start(path)
    except (ValueError, GenerateError) as exc:
        return {"job": None, "poll_disabled": True, "cancel_disabled": True,
                "status": bad(f"{refused}: {exc}")}
    return {"job": job.id, "poll_disabled": False, "cancel_disabled": False,
            "status": _muted(f"Loading {path.name}...")}


def start_sample(jobs: Generation, runs_dir: Path, name, checkpoint, prompt, temperature, top_k,
                 max_bytes, seed, previous: str | None) -> dict[str, Any]:
    def start(path: Path):
        return jobs.start_sample(path, (prompt or "").encode("utf-8"), temperature=temperature,
                                 top_k=top_k, max_bytes=max_bytes, seed=seed)
    out = _start(jobs, runs_dir, name, checkpoint, previous, "Not started", start)
    return {**out, "output": sample_output(jobs.get(out["job"]).view()) if out["job"] else no_update}


def sample_output(v: dict) -> list:
    return [html.Span(escape_text(v["prompt"]), className="prompt"),
            html.Span(escape_text(v["out"]), className="generated")]


def _phase_status(v: dict, running: str) -> Any:
    """The status line of a loading, running or failed job (None once it is done or cancelled)."""
    if v["phase"] == "loading":
        return _muted(f"Loading {v['checkpoint'].name}...")
    if v["phase"] == "running":
        return html.Span(running, className="text-primary")
    return bad(f"Failed: {v['error']}") if v["phase"] == "failed" else None


def _poll(jobs: Generation, job_id: str | None, what: str, show: Callable[[dict], dict],
          **gone) -> dict[str, Any]:
    """`show(job.view())` of the page's job, and whether to keep polling it; `gone`: the other
    outputs when the job is no longer kept."""
    if not job_id:
        raise PreventUpdate
    job = jobs.get(job_id)
    if job is None:
        return {"status": _muted(f"That {what} is no longer kept."), "poll_disabled": True,
                "cancel_disabled": True, **gone}
    v = job.view()
    ended = v["phase"] in ("done", "cancelled", "failed")
    return {"poll_disabled": ended, "cancel_disabled": ended, **show(v)}


def sample_status(v: dict) -> Any:
    n, total, secs = v["progress"], v["total"], max(v["elapsed"], 1e-6)
    where = f"checkpoint step {v['step']:,}" if v["step"] else v["checkpoint"].name
    if v["phase"] == "done":
        return ok(f"Done: {n:,} bytes in {secs:.1f} s ({n / secs:.0f} bytes/s, {where}).")
    if v["phase"] == "cancelled":
        return html.Span(f"Cancelled after {n:,} of {total:,} bytes.",
                         className="text-warning-emphasis")
    return _phase_status(v, f"Generating: {n:,}/{total:,} bytes ({n / secs:.0f} bytes/s, {where})")


def poll_sample(jobs: Generation, job_id: str | None) -> dict[str, Any]:
    return _poll(jobs, job_id, "generation",
                 lambda v: {"output": sample_output(v), "status": sample_status(v)}, output=no_update)


def cancel_job(jobs: Generation, job_id: str | None) -> Any:
    if not job_id:
        raise PreventUpdate
    return _muted("Cancelling...") if jobs.cancel(job_id) else no_update


# -- scoring ----------------------------------------------------------------------------------------
def start_score(jobs: Generation, runs_dir: Path, name, checkpoint, text,
                previous: str | None) -> dict[str, Any]:
    out = _start(jobs, runs_dir, name, checkpoint, previous, "Not scored",
                 lambda path: jobs.start_score(path, (text or "").encode("utf-8")))
    return {**out, "view": None, "summary": None}


def score_summary(v: dict) -> Any:
    s = surprisal.summary(v["text"], v["bits"])
    worst = ", ".join(f"{ch!r} {b:.1f}" for ch, b in s["worst"])
    return html.Div([
        html.Span([html.Strong(f"{s['bpb']:.3f} bpb"), f" - {s['bits']:,.0f} bits for "
                   f"{s['bytes']:,} bytes (ideal code length {s['ideal_bytes']:,} bytes, "
                   f"{s['bits'] / max(1, 8 * s['bytes']):.1%} of the raw size)"]),
        html.Div(f"Most surprising: {worst} bits", className="text-muted") if worst else None,
    ])


def score_view(v: dict) -> dict[str, Any]:
    """Status, coloured text and summary of a scoring job (the text once it has ended)."""
    status = _phase_status(v, f"Scoring: {v['progress']:,}/{v['total']:,} bytes")
    if status is not None:
        return {"status": status, "view": no_update, "summary": no_update}
    bits = v["bits"] if v["bits"] is not None else []
    status = (_muted(f"Scored {len(bits):,} bytes with checkpoint step {v['step']:,}.")
              if v["phase"] == "done" else
              html.Span(f"Cancelled: {len(bits):,} of {v['total']:,} bytes scored.",
                        className="text-warning-emphasis"))
    if not len(bits):
        return {"status": status, "view": no_update, "summary": no_update}
    return {"status": status, "view": surprisal.render(v["text"], bits),
            "summary": score_summary({**v, "text": v["text"][:len(bits)], "bits": bits})}


def poll_score(jobs: Generation, job_id: str | None) -> dict[str, Any]:
    return _poll(jobs, job_id, "scoring job", score_view, view=no_update, summary=no_update)


# -- wiring -----------------------------------------------------------------------------------------
def register(app, cockpit: AppContext) -> None:
    runs_dir, jobs = cockpit.settings.runs_dir, cockpit.generation

    @app.callback(Output(ids.GEN_INFO, "children"), Output(common.GEN_CHECKPOINT, "options"),
                  Output(common.GEN_CHECKPOINT, "value"), Output(ids.GEN_START, "disabled"),
                  Output(ids.SURPRISAL_BTN, "disabled"),
                  Output(common.pick_seen(common.GEN_CHECKPOINT), "data"),
                  Input(common.RUN_SELECT, "value"), Input(common.TABS, "active_tab"),
                  Input(common.tab_tick(common.TAB_GENERATE), "data"), State(common.GEN_CHECKPOINT, "value"),
                  State(common.GEN_CHECKPOINT, "options"), State(common.SELECTED_CHECKPOINT, "data"),
                  State(common.pick_seen(common.GEN_CHECKPOINT), "data"))
    @visible_only(common.TAB_GENERATE)
    def show_checkpoints(name, _tab, _n, current, current_options, selected, seen):
        v = checkpoint_view(runs_dir, name, current, selected, seen)
        options = v["options"] if v["options"] != current_options else no_update
        value = v["value"] if v["value"] != current else no_update
        return (v["info"], options, value, v["disabled"], v["disabled"],
                v["seen"] if v["seen"] != seen else no_update)

    def outputs(again: bool = False, **targets) -> dict:
        return {k: Output(*t, allow_duplicate=again) for k, t in targets.items()}

    gen = dict(poll_disabled=(ids.GEN_POLL, "disabled"), cancel_disabled=(ids.GEN_CANCEL, "disabled"),
               status=(ids.GEN_STATUS, "children"), output=(ids.GEN_OUTPUT, "children"))
    score = dict(poll_disabled=(ids.SURPRISAL_POLL, "disabled"),
                 cancel_disabled=(ids.SURPRISAL_CANCEL, "disabled"),
                 status=(ids.SURPRISAL_STATUS, "children"), view=(ids.SURPRISAL_VIEW, "children"),
                 summary=(ids.SURPRISAL_SUMMARY, "children"))

    @app.callback(output=outputs(job=(ids.GEN_JOB, "data"), **gen),
                  inputs=[Input(ids.GEN_START, "n_clicks")],
                  state=[State(common.RUN_SELECT, "value"), State(common.GEN_CHECKPOINT, "value"),
                         State(ids.GEN_PROMPT, "value"), State(ids.GEN_TEMPERATURE, "value"),
                         State(ids.GEN_TOP_K, "value"), State(ids.GEN_MAX_BYTES, "value"),
                         State(ids.GEN_SEED, "value"), State(ids.GEN_JOB, "data")],
                  prevent_initial_call=True)
    def generate(_n, *args):
        return start_sample(jobs, runs_dir, *args)

    @app.callback(output=outputs(True, **gen), inputs=[Input(ids.GEN_POLL, "n_intervals")],
                  state=[State(ids.GEN_JOB, "data")], prevent_initial_call=True)
    def poll_generation(_n, job_id):
        return poll_sample(jobs, job_id)

    @app.callback(output=outputs(job=(ids.SURPRISAL_JOB, "data"), **score),
                  inputs=[Input(ids.SURPRISAL_BTN, "n_clicks")],
                  state=[State(common.RUN_SELECT, "value"), State(common.GEN_CHECKPOINT, "value"),
                         State(ids.SURPRISAL_TEXT, "value"), State(ids.SURPRISAL_JOB, "data")],
                  prevent_initial_call=True)
    def score_text(_n, *args):
        return start_score(jobs, runs_dir, *args)

    @app.callback(output=outputs(True, **score), inputs=[Input(ids.SURPRISAL_POLL, "n_intervals")],
                  state=[State(ids.SURPRISAL_JOB, "data")], prevent_initial_call=True)
    def poll_scoring(_n, job_id):
        return poll_score(jobs, job_id)

    for button, store, status in ((ids.GEN_CANCEL, ids.GEN_JOB, ids.GEN_STATUS),
                                  (ids.SURPRISAL_CANCEL, ids.SURPRISAL_JOB, ids.SURPRISAL_STATUS)):
        @app.callback(Output(status, "children", allow_duplicate=True), Input(button, "n_clicks"),
                      State(store, "data"), prevent_initial_call=True)
        def cancel(_n, job_id):
            return cancel_job(jobs, job_id)
