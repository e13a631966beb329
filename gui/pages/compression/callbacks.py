"""Compression tab: upload, choose a coding model (the store's, the shipped default, or a checkpoint
of the run), start / cancel a compression job, the jobs table with the classical compressors on the
same file, and the round-trip verification. The jobs run in workers of
gui/services/compress_jobs.JobManager; these callbacks start them and render what the manager and
the run's metrics.db say (so a reload shows the same)."""
from __future__ import annotations

import time
from pathlib import Path

import dash_bootstrap_components as dbc
import pandas as pd
from dash import Input, Output, State, ctx, html, no_update
from dash.exceptions import PreventUpdate

from umoec.metrics import read
from umoec.run import RunDir

from ... import ids as common
from ...components.checkpoint_picker import register_model_dropdown
from ...components.job_status import (
    alert,
    job_action,
    job_controls,
    job_outputs,
    register_job_view,
    status_badge,
)
from ...context import AppContext
from ...figures.base import empty_fig
from ...figures.compression import compression_comparison_fig
from ...services import forge
from ...services.compress_jobs import Job, JobManager, read_sidecar, status_kind
from ...services.runs import resolve
from ...services.uploads import (
    UploadError,
    decode_contents,
    decoded_size,
    format_bytes,
    store_upload,
    too_large_message,
)
from ...view.read_errors import db_read_error
from . import ids


# -- the jobs table ---------------------------------------------------------------------------
def size_cells(raw: int, packed: int, secs, done: bool = True) -> list[str]:
    """Raw and compressed size, then ratio, bpb, time and speed when the job finished."""
    speed = raw / float(secs) if done and secs and float(secs) > 0 else None
    return [format_bytes(raw), format_bytes(packed),
            f"{raw / packed:.2f}x" if done and packed else "",
            f"{8.0 * packed / raw:.3f}" if done and raw else "",
            f"{float(secs):.2f} s" if done and secs is not None and not pd.isna(secs) else "",
            f"{format_bytes(speed)}/s" if speed else ""]


def job_cells(row: dict) -> list:
    raw, packed = row.get("raw_bytes"), row.get("compressed_bytes")
    if raw is None or packed is None or pd.isna(raw) or pd.isna(packed):
        return [""] * 6
    done = status_kind(row.get("status")) in ("done", "simulated")
    return size_cells(int(raw), int(packed), row.get("elapsed_s"), done)


HEADER = ["#", "File", "Profile", "Model", "Raw Size", "Compressed Size", "Ratio", "bpb", "Time",
          "speed", "Status"]


def model_cell(row: dict, side: dict) -> str:
    """The model a job coded with ('name (hash12)'), else the one it asked for, else what its
    `checkpoint` column names (simulated rows, jobs of older cockpits)."""
    if side.get("model") or side.get("model_request"):
        return str(side.get("model") or side["model_request"])
    ck = Path(str(row.get("checkpoint") or ""))
    return f"checkpoint {ck.name}" if ck.suffix == ".pt" else ck.name


def model_cells(run: RunDir, jobs: pd.DataFrame) -> dict[int, str]:
    return {int(r["job_id"]): model_cell(r, read_sidecar(run, int(r["job_id"])))
            for r in jobs.to_dict("records")}


def jobs_table(jobs: pd.DataFrame, selected: int | None, baselines: list[dict],
               simulated_run: bool = False, model_names: dict | None = None) -> list:
    """thead + tbody of compression-results-table; the selected job's baselines under its row
    (one that failed on the file with its reason). model_names: job_id -> the Model cell."""
    head = html.Thead(html.Tr([html.Th(h) for h in HEADER]))
    if jobs.empty:
        return [head, html.Tbody(html.Tr(html.Td(
            "No compression jobs in this run yet: choose a file and a model, then Compress.",
            colSpan=len(HEADER), className="text-muted")))]
    body = []
    for row in jobs.to_dict("records"):
        simulated = status_kind(row.get("status")) == "simulated"
        name = Path(str(row.get("input_path") or "")).name
        file_cell = html.Td([name, " ", dbc.Badge("simulated", color="info")] if simulated
                            else name, title=str(row.get("input_path") or ""))
        model = (model_names or {}).get(int(row["job_id"]), "")
        cells = [html.Td(int(row["job_id"])), file_cell, html.Td(row.get("profile") or ""),
                 html.Td(model, className="small", title=str(row.get("checkpoint") or ""))]
        cells += [html.Td(c, className="text-nowrap") for c in job_cells(row)]
        cells.append(html.Td(status_badge(row.get("status")), style={"maxWidth": "360px"}))
        sel = selected is not None and int(row["job_id"]) == int(selected)
        body.append(html.Tr(cells, className="table-active" if sel else ""))
        if sel:
            for b in baselines:
                name = html.Td(f"  {b['name']} (same file)", className="ps-4 fst-italic")
                if "error" in b:
                    body.append(html.Tr([html.Td(""), name, html.Td(str(b["error"]),
                                                                    colSpan=len(HEADER) - 2)],
                                        className="text-muted"))
                    continue
                body.append(html.Tr([html.Td(""), name, html.Td(""), html.Td("")]
                                    + [html.Td(c, className="text-nowrap") for c in size_cells(
                                        int(b["raw_bytes"]), int(b["packed_bytes"]),
                                        float(b.get("seconds") or 0))]
                                    + [html.Td("baseline", className="text-muted")],
                                    className="text-muted"))
    if simulated_run:
        body.append(html.Tr(html.Td("Rows marked simulated were written by bin.simulate_training: "
                                    "no file was compressed.", colSpan=len(HEADER),
                                    className="text-muted small")))
    return [head, html.Tbody(body)]


def comparison_frame(row: dict | None, baselines: list[dict]) -> pd.DataFrame:
    """Job `row` (u-moec-tiny), then the baselines on the same file; empty without a row."""
    methods = [] if row is None else [
        {"name": f"u-moec-tiny ({row.get('profile')})", "raw_bytes": row["raw_bytes"],
         "packed_bytes": row["compressed_bytes"], "seconds": row.get("elapsed_s")},
        *(b for b in baselines if "error" not in b)]
    return pd.DataFrame([(m["name"], int(m["raw_bytes"]), int(m["packed_bytes"]),
                          float(m.get("seconds") or 0)) for m in methods],
                        columns=["method", "raw_bytes", "packed_bytes", "seconds"])


def verify_view(job: Job | None, side: dict):
    """compress-verify-result: PASS in green or FAIL in red with the reason (or progress)."""
    if job is not None and job.running:
        return html.Div(f"Verifying: {job.progress_text()} ...", className="text-muted")
    v = side.get("verify") if side else None
    if not v:
        return html.Div("Not verified yet.", className="text-muted small")
    when = time.strftime("%H:%M:%S", time.localtime(v["ts"])) if v.get("ts") else ""
    if v.get("ok") is None:
        return html.Div([html.Span("Cancelled", className="fw-bold text-secondary fs-5"),
                         html.Div(v.get("reason", ""), className="small text-muted")])
    colour = "text-success" if v["ok"] else "text-danger"
    return html.Div([html.Span("PASS" if v["ok"] else "FAIL", className=f"fw-bold fs-4 {colour}"),
                     html.Span(f" at {when}" if when else "", className="small text-muted"),
                     html.Div(v.get("reason", ""), className=f"small {colour}")])


def done_options(jobs: pd.DataFrame) -> list[dict]:
    done = [r for r in jobs.to_dict("records")
            if status_kind(r.get("status")) == "done" and r.get("raw_bytes")]
    return [{"label": f"#{int(r['job_id'])} {Path(str(r['input_path'])).name} ({r.get('profile')}, "
                      f"{8.0 * float(r['compressed_bytes']) / float(r['raw_bytes']):.3f} bpb)",
             "value": int(r["job_id"])} for r in done]


# -- uploads ----------------------------------------------------------------------------------
def handle_upload(trigger, contents, picked, filename, sandbox: Path, max_bytes: int) -> tuple:
    """(status, file path value, contents reset) for an upload or a too-large pick."""
    if trigger == ids.COMPRESS_UPLOAD_PICKED:
        size = int((picked or {}).get("size") or 0)
        if size > max_bytes:
            name = str((picked or {}).get("name") or "").replace("\x00", "")
            return alert(too_large_message(name, size, max_bytes), "danger"), no_update, no_update
        raise PreventUpdate
    if not contents:
        raise PreventUpdate
    shown = repr(str(filename or "").replace("\x00", "\\0"))
    size = decoded_size(contents)
    if size > max_bytes:
        return alert(too_large_message(shown, size, max_bytes), "danger"), no_update, None
    try:
        path = store_upload(sandbox, filename, decode_contents(contents), max_bytes)
    except UploadError as exc:
        return alert(str(exc), "danger"), no_update, None
    return (alert(f"Uploaded {shown} ({format_bytes(size)}), stored as {path}", "success"),
            str(path), None)


def upload_hint(sandbox: Path, max_bytes: int) -> str:
    return (f"Uploads are copied into {sandbox} under a safe name (up to "
            f"{format_bytes(max_bytes)}); compressed files go to RUNDIR/compressed/.")


# -- callbacks --------------------------------------------------------------------------------
def job_row(jobs: pd.DataFrame, job_id) -> dict | None:
    match = jobs[jobs["job_id"] == job_id]
    return match.iloc[0].to_dict() if not match.empty else None


def do_action(jobs: JobManager, runs_dir: Path, trigger, path, profile, checkpoint, run_name,
              job_id, model=None) -> dict:
    """Start / cancel / verify; returns the action store {text, colour, ts} (empty text: ok)."""
    def start(run: RunDir) -> None:
        if trigger != ids.COMPRESS_VERIFY_BTN:
            jobs.start_compress(run, path, profile, checkpoint, model=model)
            return
        row = None
        if job_id:
            with read.open_db(run.db_path) as conn:
                row = job_row(read.compression_jobs(conn), int(job_id))
        jobs.start_verify(run, job_id, row)
    return job_action(jobs, runs_dir, run_name, "compress", start,
                      "Choose a run in the top bar first: its folder keeps the compressed files "
                      "and the job history.", cancel=trigger == ids.COMPRESS_CANCEL_BTN)


def register(app, cockpit: AppContext) -> None:
    runs_dir = cockpit.settings.runs_dir
    jobs = cockpit.jobs
    sandbox, max_bytes = cockpit.settings.upload_dir, cockpit.settings.max_upload_bytes

    @app.callback(Output(ids.COMPRESS_FILE_UPLOAD, "max_size"),
                  Output(ids.COMPRESS_UPLOAD_HINT, "children"),
                  Input(ids.COMPRESS_UPLOAD_HINT, "id"))
    def upload_limits(_):
        return max_bytes, upload_hint(sandbox, max_bytes)

    @app.callback(Output(ids.COMPRESS_UPLOAD_STATUS, "children"),
                  Output(ids.COMPRESS_FILE_PATH, "value"),
                  Output(ids.COMPRESS_FILE_UPLOAD, "contents"),
                  Input(ids.COMPRESS_FILE_UPLOAD, "contents"),
                  Input(ids.COMPRESS_UPLOAD_PICKED, "data"),
                  State(ids.COMPRESS_FILE_UPLOAD, "filename"), prevent_initial_call=True)
    def upload(contents, picked, filename):
        return handle_upload(ctx.triggered_id, contents, picked, filename, sandbox, max_bytes)

    register_model_dropdown(app, runs_dir, common.COMPRESS_MODEL, ids.COMPRESS_MODEL_NOTE,
                            common.COMPRESS_CHECKPOINT, common.TAB_COMPRESSION)

    @app.callback(Output(ids.COMPRESS_ACTION, "data"),
                  Input(ids.COMPRESS_BTN, "n_clicks"), Input(ids.COMPRESS_CANCEL_BTN, "n_clicks"),
                  Input(ids.COMPRESS_VERIFY_BTN, "n_clicks"),
                  State(ids.COMPRESS_FILE_PATH, "value"), State(ids.COMPRESS_PROFILE, "value"),
                  State(common.COMPRESS_MODEL, "value"), State(common.COMPRESS_CHECKPOINT, "value"),
                  State(common.RUN_SELECT, "value"), State(ids.COMPRESS_JOB_SELECT, "value"),
                  prevent_initial_call=True)
    def act(_c, _x, _v, path, profile, model, checkpoint, name, job_id):
        # an empty model dropdown (nothing listed yet) means the shipped default, never the
        # checkpoint dropdown's value
        return do_action(jobs, runs_dir, ctx.triggered_id, path, profile, checkpoint, name,
                         job_id, model=model or "default")

    register_job_view(app, common.TAB_COMPRESSION, REFRESH,
                      [Input(ids.COMPRESS_ACTION, "data"), Input(ids.COMPRESS_JOB_SELECT, "value")],
                      ids.COMPRESS_VERSION, lambda *args: refresh_view(jobs, runs_dir, *args))


# the refresh's outputs by name (refresh_view returns them so; Dash's dict outputs)
REFRESH = {**job_outputs(ids.COMPRESS_STATUS, ids.COMPRESS_PROGRESS, "compress_disabled",
                         ids.COMPRESS_BTN, ids.COMPRESS_CANCEL_BTN),
           "verify_disabled": (ids.COMPRESS_VERIFY_BTN, "disabled"),
           "table": (ids.COMPRESS_RESULTS_TABLE, "children"),
           "job_options": (ids.COMPRESS_JOB_SELECT, "options"),
           "job_value": (ids.COMPRESS_JOB_SELECT, "value"),
           "figure": (ids.COMPRESS_COMPARISON, "figure"),
           "verify": (ids.COMPRESS_VERIFY_RESULT, "children"),
           "version": (ids.COMPRESS_VERSION, "data")}
REFRESH_OUTPUTS = tuple(REFRESH)
VIEW_OUTPUTS = REFRESH_OUTPUTS[7:]   # what stays as it is when nothing changed


def refresh_view(jobs: JobManager, runs_dir: Path, name, action, selected, seen) -> dict:
    """Every output of the Compression tab's refresh, by name (REFRESH_OUTPUTS; a plain
    function: tests call it)."""
    run = resolve(runs_dir, name)
    controls = dict(job_controls(jobs.latest(name, "compress"), action, "compress_disabled"),
                    verify_disabled=True)
    busy = not controls["cancel_disabled"]
    no_jobs = dict(table=jobs_table(pd.DataFrame(), None, []), job_options=[], job_value=None,
                   verify="")
    if run is None:
        msg = forge.not_usable_here(runs_dir, name, "compression") or (
            "No run selected: choose one in the top bar (its folder keeps the compressed "
            "files and the job history).")
        return dict(controls, **no_jobs, status=controls["status"] or alert(msg, "secondary"),
                    compress_disabled=True, cancel_disabled=True,
                    figure=compression_comparison_fig(pd.DataFrame()), version=None)
    try:
        with read.open_db(run.db_path) as conn:
            table = read.compression_jobs(conn)
    except FileNotFoundError:
        table = pd.DataFrame(columns=read.JOB_COLUMNS)
    except read.READ_ERRORS as exc:
        err = alert(db_read_error(run.db_path, exc), "danger")
        if read.transient(exc) and (seen or {}).get("run") == name:   # same run, busy: keep the view
            return dict(controls, **dict.fromkeys(VIEW_OUTPUTS, no_update), status=err)
        # another run's jobs, chart and PASS must not stay on screen under this run's name
        return dict(controls, **no_jobs, status=err,
                    figure=empty_fig("This run's metrics.db cannot be read", height=260),
                    version={"run": name, "newest": None, "sig": "unreadable"})
    options = done_options(table)
    values = [o["value"] for o in options]
    newest = values[0] if values else None
    seen = seen or {}
    if selected not in values or (newest is not None and newest != seen.get("newest")
                                  and seen.get("run") == name):
        selected = newest
    vjob = jobs.verify_job(name, selected)
    side = read_sidecar(run, selected) if selected else {}
    sig = [name, table[["job_id", "status"]].astype(str).values.tolist(), selected,
           side.get("verify"), vjob.progress_text() if vjob and vjob.running else None,
           sorted(side)]
    version = {"run": name, "newest": newest, "sig": repr(sig)}
    controls["verify_disabled"] = busy or selected is None
    if seen.get("sig") == version["sig"]:
        return dict(controls, **dict.fromkeys(VIEW_OUTPUTS, no_update))
    row = job_row(table, selected) if selected is not None else None
    baselines = [b for b in side.get("baselines") or [] if isinstance(b, dict)]
    simulated_run = bool((table["status"] == "simulated").any())
    title = f"job #{selected}: {Path(str(row['input_path'])).name}" if row else ""
    fig = compression_comparison_fig(comparison_frame(row, baselines), title)
    return dict(controls, table=jobs_table(table, selected, baselines, simulated_run,
                                           model_cells(run, table)),
                job_options=options, job_value=selected, figure=fig,
                verify=verify_view(vjob, side), version=version)
