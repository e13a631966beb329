"""Compression tab: upload, choose a coding model (the store's, the shipped default preselected, or
a checkpoint of the run), start / cancel a compression job, its progress, the jobs table with the
classical compressors on the same file, and the round-trip verification (with the model the .umc
file names).

The jobs run in worker processes owned by gui/services/compress_jobs.JobManager; these callbacks only
start them and render what the manager and the run's metrics.db say (so a reload shows the same).
"""
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
from ...components.checkpoint_picker import (
    register_checkpoint_dropdown,
    register_model_dropdown,
)
from ...components.job_status import alert, progress_outputs, status_area, status_badge
from ...components.visible import visible_only
from ...context import AppContext
from ...figures.base import empty_fig
from ...figures.compression import compression_comparison_fig
from ...services import forge
from ...services.compress_jobs import Job, JobError, JobManager, read_sidecar, status_kind
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
def _fmt_time(s) -> str:
    return "" if s is None or pd.isna(s) else f"{float(s):.2f} s"


def job_cells(row: dict) -> list:
    raw, packed, secs = row.get("raw_bytes"), row.get("compressed_bytes"), row.get("elapsed_s")
    have = raw is not None and packed is not None and not pd.isna(raw) and not pd.isna(packed)
    raw_i, packed_i = (int(raw), int(packed)) if have else (0, 0)
    done = have and status_kind(row.get("status")) in ("done", "simulated")
    speed = (raw_i / float(secs)) if done and secs and float(secs) > 0 else None
    return [format_bytes(raw_i) if have else "",
            format_bytes(packed_i) if have else "",
            f"{raw_i / packed_i:.2f}x" if done and packed_i else "",
            f"{8.0 * packed_i / raw_i:.3f}" if done and raw_i else "",
            _fmt_time(secs) if done else "",
            f"{format_bytes(speed)}/s" if speed else ""]


HEADER = ["#", "File", "Profile", "Model", "Raw Size", "Compressed Size", "Ratio", "bpb", "Time",
          "speed", "Status"]


def model_cell(row: dict, side: dict) -> str:
    """The model a job coded with ('name (hash12)'), else the one it asked for, else what its
    `checkpoint` column names (simulated rows, jobs of older cockpits)."""
    if side.get("model"):
        return str(side["model"])
    if side.get("model_request"):
        return str(side["model_request"])
    ck = str(row.get("checkpoint") or "")
    if not ck:
        return ""
    return f"checkpoint {Path(ck).name}" if ck.endswith(".pt") else Path(ck).name


def model_cells(run: RunDir, jobs: pd.DataFrame) -> dict[int, str]:
    return {int(r["job_id"]): model_cell(r, read_sidecar(run, int(r["job_id"])))
            for r in jobs.to_dict("records")}


def baseline_cells(b: dict) -> list:
    raw, packed, secs = int(b["raw_bytes"]), int(b["packed_bytes"]), float(b.get("seconds") or 0)
    return [format_bytes(raw), format_bytes(packed), f"{raw / packed:.2f}x" if packed else "",
            f"{8.0 * packed / raw:.3f}" if raw else "", f"{secs:.2f} s",
            f"{format_bytes(raw / secs)}/s" if secs > 0 else ""]


def jobs_table(jobs: pd.DataFrame, selected: int | None, baselines: list[dict],
               simulated_run: bool = False, model_names: dict | None = None) -> list:
    """thead + tbody of compression-results-table; the selected job's baselines under its row.
    model_names: job_id -> the Model cell (model_cells)."""
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
                body.append(html.Tr([html.Td(""), html.Td(f"  {b['name']} (same file)",
                                                          className="ps-4 fst-italic"),
                                     html.Td(""), html.Td("")]
                                    + [html.Td(c, className="text-nowrap")
                                       for c in baseline_cells(b)]
                                    + [html.Td("baseline", className="text-muted")],
                                    className="text-muted"))
    if simulated_run:
        body.append(html.Tr(html.Td("Rows marked simulated were written by bin.simulate_training: "
                                    "no file was compressed.", colSpan=len(HEADER),
                                    className="text-muted small")))
    return [head, html.Tbody(body)]


def comparison_frame(row: dict | None, baselines: list[dict]) -> pd.DataFrame:
    cols = ["method", "raw_bytes", "packed_bytes", "seconds"]
    if row is None:
        return pd.DataFrame(columns=cols)
    out = [(f"u-moec-tiny ({row.get('profile')})", int(row["raw_bytes"]),
            int(row["compressed_bytes"]), float(row.get("elapsed_s") or 0))]
    out += [(b["name"], int(b["raw_bytes"]), int(b["packed_bytes"]), float(b.get("seconds") or 0))
            for b in baselines]
    return pd.DataFrame(out, columns=cols)


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
    ok = bool(v["ok"])
    return html.Div([
        html.Span("PASS" if ok else "FAIL", className="fw-bold fs-4 "
                  + ("text-success" if ok else "text-danger")),
        html.Span(f" at {when}" if when else "", className="small text-muted"),
        html.Div(v.get("reason", ""), className="small " + ("text-success" if ok else "text-danger")),
    ])


def done_options(jobs: pd.DataFrame) -> list[dict]:
    out = []
    for row in jobs.to_dict("records"):
        if status_kind(row.get("status")) != "done" or not row.get("raw_bytes"):
            continue
        bpb = 8.0 * float(row["compressed_bytes"]) / float(row["raw_bytes"])
        out.append({"label": f"#{int(row['job_id'])} {Path(str(row['input_path'])).name} "
                             f"({row.get('profile')}, {bpb:.3f} bpb)",
                    "value": int(row["job_id"])})
    return out


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
def do_action(jobs: JobManager, runs_dir: Path, trigger, path, profile, checkpoint, run_name,
              job_id, model=None) -> dict:
    """Start / cancel / verify; returns the action store {text, colour, ts} (empty text: ok)."""
    now = time.time()
    if trigger == ids.COMPRESS_CANCEL_BTN:
        return {"text": jobs.cancel(run_name, "compress"), "colour": "secondary", "ts": now}
    run = resolve(runs_dir, run_name)
    if run is None:
        return {"text": "Choose a run in the top bar first: its folder keeps the compressed "
                        "files and the job history.",
                "colour": "warning", "ts": now}
    try:
        if trigger == ids.COMPRESS_VERIFY_BTN:
            row = None
            if job_id:
                with read.open_db(run.db_path) as conn:
                    df = read.compression_jobs(conn)
                match = df[df["job_id"] == int(job_id)]
                row = match.iloc[0].to_dict() if not match.empty else None
            jobs.start_verify(run, job_id, row)
        else:
            jobs.start_compress(run, path, profile, checkpoint, model=model)
    except JobError as exc:
        return {"text": str(exc), "colour": "warning", "ts": now}
    except read.READ_ERRORS as exc:
        return {"text": f"Cannot read {run.db_path}: {exc}", "colour": "danger", "ts": now}
    return {"text": "", "ts": now}


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

    register_checkpoint_dropdown(app, runs_dir, common.COMPRESS_CHECKPOINT, common.TAB_COMPRESSION)
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

    @app.callback(output={k: Output(*target) for k, target in REFRESH.items()},
                  inputs=[Input(common.tab_tick(common.TAB_COMPRESSION), "data"),
                          Input(common.RUN_SELECT, "value"), Input(common.TABS, "active_tab"),
                          Input(ids.COMPRESS_ACTION, "data"), Input(ids.COMPRESS_JOB_SELECT, "value")],
                  state=[State(ids.COMPRESS_VERSION, "data")])
    @visible_only(common.TAB_COMPRESSION)
    def refresh(_n, name, _tab, action, selected, seen):
        return refresh_view(jobs, runs_dir, name, action, selected, seen)


# the refresh's outputs by name (refresh_view returns them so; Dash's dict outputs)
REFRESH = {"status": (ids.COMPRESS_STATUS, "children"),
           "progress": (ids.COMPRESS_PROGRESS, "value"),
           "progress_label": (ids.COMPRESS_PROGRESS, "label"),
           "progress_style": (ids.COMPRESS_PROGRESS, "style"),
           "compress_disabled": (ids.COMPRESS_BTN, "disabled"),
           "cancel_disabled": (ids.COMPRESS_CANCEL_BTN, "disabled"),
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
    job = jobs.latest(name, "compress")
    busy = job is not None and job.running
    status = status_area(job, action)
    controls = dict(zip(REFRESH_OUTPUTS[1:4], progress_outputs(job), strict=True),
                    compress_disabled=busy, cancel_disabled=not busy, verify_disabled=True)
    keep = dict.fromkeys(VIEW_OUTPUTS, no_update)
    if run is None:
        msg = forge.not_usable_here(runs_dir, name, "compression") or (
            "No run selected: choose one in the top bar (its folder keeps the compressed "
            "files and the job history).")
        return dict(controls, status=status or alert(msg, "secondary"), compress_disabled=True,
                    cancel_disabled=True, table=jobs_table(pd.DataFrame(), None, []),
                    job_options=[], job_value=None,
                    figure=compression_comparison_fig(pd.DataFrame()), verify="", version=None)
    try:
        with read.open_db(run.db_path) as conn:
            table = read.compression_jobs(conn)
    except FileNotFoundError:
        table = pd.DataFrame(columns=read.JOB_COLUMNS)
    except read.READ_ERRORS as exc:
        err = alert(db_read_error(run.db_path, exc), "danger")
        if read.transient(exc) and (seen or {}).get("run") == name:   # same run, busy: keep the view
            return dict(controls, **keep, status=err)
        # another run's jobs, chart and PASS must not stay on screen under this run's name
        return dict(controls, status=err, table=jobs_table(pd.DataFrame(), None, []),
                    job_options=[], job_value=None,
                    figure=empty_fig("This run's metrics.db cannot be read", height=260),
                    verify="", version={"run": name, "newest": None, "sig": "unreadable"})
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
        return dict(controls, **keep, status=status)
    row = None
    if selected is not None:
        match = table[table["job_id"] == selected]
        row = match.iloc[0].to_dict() if not match.empty else None
    baselines = [b for b in side.get("baselines") or [] if isinstance(b, dict)]
    simulated_run = bool((table["status"] == "simulated").any()) if not table.empty else False
    title = f"job #{selected}: {Path(str(row['input_path'])).name}" if row else ""
    fig = compression_comparison_fig(comparison_frame(row, baselines), title)
    return dict(controls, status=status,
                table=jobs_table(table, selected, baselines, simulated_run, model_cells(run, table)),
                job_options=options, job_value=selected, figure=fig,
                verify=verify_view(vjob, side), version=version)
