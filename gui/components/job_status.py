"""A background job's status line, progress bar and status badge, and the action, outputs and
refresh wiring the Compression and Evaluation tabs share (jobs: gui/services/compress_jobs.py)."""
from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import dash_bootstrap_components as dbc
from dash import Input, Output, State, html

from umoec.metrics import read

from .. import ids
from ..services.compress_jobs import Job, JobError, JobManager, status_kind, status_reason
from ..services.runs import resolve
from ..services.uploads import format_bytes
from ..view.read_errors import db_read_error
from .visible import visible_only

STATUS_COLOURS = {"done": "success", "failed": "danger", "cancelled": "secondary",
                  "running": "primary", "simulated": "info"}


def alert(text, colour: str) -> dbc.Alert:
    return dbc.Alert(text, color=colour, class_name="py-2 px-3 mb-0 small")


def progress_outputs(job: Job | None) -> tuple:
    """(value, label, style) of a progress bar for a running job; hidden otherwise."""
    if job is None or not job.running:
        return 0, "", {"display": "none"}
    frac = job.fraction
    value = 100 if frac is None else max(2, round(100 * frac))
    label = f"{100 * frac:.0f}%" if frac is not None and frac >= 0.08 else ""
    return value, label, {"height": "20px"}


def job_message(job: Job) -> tuple[str, str]:
    """(text, colour) describing a job, running or finished."""
    name = {"compress": f"Job #{job.job_id} (compress {job.label})",
            "verify": f"Verification of job #{job.job_id} ({job.label})",
            "eval": f"Evaluation of {job.label}",
            "export": f"Export of {job.label}"}.get(job.kind, job.kind)
    if job.running:
        pct = f" ({100 * job.fraction:.0f}%)" if job.fraction is not None else ""
        return f"{name}: {job.progress_text()}{pct}, {job.elapsed:.0f} s", "info"
    if job.state != "done":
        return f"{name} {job.state}: {job.message}", "secondary" if job.state == "cancelled" else "danger"
    r = job.result or {}
    if job.kind == "compress":
        raw, packed = r.get("raw_bytes", 0), r.get("packed_bytes", 0)
        bpb = 8.0 * packed / raw if raw else 0.0
        return (f"{name} done: {raw:,} -> {packed:,} bytes, {bpb:.3f} bpb in "
                f"{r.get('seconds', 0):.2f} s (profile {r.get('profile')}, model "
                f"{r.get('model')})", "success")
    if job.kind == "verify":
        ok = bool(r.get("ok"))
        return f"{name}: {'PASS' if ok else 'FAIL'}: {r.get('reason', '')}", "success" if ok else "danger"
    if job.kind == "export":
        return (f"{name} done: model {r.get('model')} written to {r.get('path')} "
                f"({format_bytes(r.get('bytes') or 0)}); the Compression and Evaluation tabs "
                "list it now", "success")
    rt = "PASS" if r.get("roundtrip_ok") else "FAIL"
    text = (f"{name} done: {r.get('dataset')}, {r.get('bpb', 0):.4f} bpb, roundtrip {rt} "
            f"({r.get('original_bytes', 0):,} bytes of {r.get('source')})")
    if r.get("roundtrip_error"):
        text += f": {r['roundtrip_error']}"
    if r.get("note"):
        text += f". {r['note']}"
    return text, "success" if r.get("roundtrip_ok") else "danger"


def status_area(job: Job | None, action: dict | None):
    """The tab's status line: the last button's refusal if newer than the job, else the job."""
    if action and action.get("text"):
        newest = max(job.started, job.ended or 0) if job is not None else 0
        if action.get("ts", 0) >= newest:
            return alert(action["text"], action.get("colour", "warning"))
    if job is None:
        return ""
    return alert(*job_message(job))


def status_badge(status: str | None):
    kind = status_kind(status) or "?"
    badge = dbc.Badge(kind, color=STATUS_COLOURS.get(kind, "secondary"), class_name="me-1")
    reason = status_reason(status)
    return [badge, html.Span(reason, className="text-muted")] if reason else badge


# -- a job tab's buttons and refresh ----------------------------------------------------------
def job_action(jobs: JobManager, runs_dir: Path, run_name, slot: str, start: Callable,
               no_run: str = "Choose a run in the top bar first.", cancel: bool = False) -> dict:
    """A press of a job button: Cancel (`cancel`), else `start(run)`; the action store
    {text, colour, ts} (empty text: started)."""
    now = time.time()
    if cancel:
        return {"text": jobs.cancel(run_name, slot), "colour": "secondary", "ts": now}
    run = resolve(runs_dir, run_name)
    if run is None:
        return {"text": no_run, "colour": "warning", "ts": now}
    try:
        start(run)
    except JobError as exc:
        return {"text": str(exc), "colour": "warning", "ts": now}
    except read.READ_ERRORS as exc:
        return {"text": db_read_error(run.db_path, exc), "colour": "danger", "ts": now}
    return {"text": "", "ts": now}


def job_outputs(status: str, progress: str, start_key: str, start_btn: str, cancel_btn: str) -> dict:
    """The status line, progress bar and Start / Cancel buttons of a job tab's refresh, by name."""
    return {"status": (status, "children"), "progress": (progress, "value"),
            "progress_label": (progress, "label"), "progress_style": (progress, "style"),
            start_key: (start_btn, "disabled"), "cancel_disabled": (cancel_btn, "disabled")}


def job_controls(job: Job | None, action: dict | None, start_key: str) -> dict:
    """The values of job_outputs for `job` (the Start button is off while it runs)."""
    busy = job is not None and job.running
    value, label, style = progress_outputs(job)
    return {"status": status_area(job, action), "progress": value, "progress_label": label,
            "progress_style": style, start_key: busy, "cancel_disabled": not busy}


def register_job_view(app, tab: str, outputs: dict, inputs: list, version: str, view: Callable) -> None:
    """A job tab's refresh: on its tick, the run, the tab and `inputs`, while shown;
    `view(run name, *inputs, version seen)` returns every output of `outputs` by name."""
    @app.callback(output={k: Output(*target) for k, target in outputs.items()},
                  inputs=[Input(ids.tab_tick(tab), "data"), Input(ids.RUN_SELECT, "value"),
                          Input(ids.TABS, "active_tab"), *inputs],
                  state=[State(version, "data")])
    @visible_only(tab)
    def refresh(_n, name, _tab, *rest):
        return view(name, *rest)
