"""Evaluation tab: run the evaluation (umoec.compress.worker eval, of a checkpoint of the run or
a coding model) as a background job, and show the run's eval_results / eval_baselines: the table
against the reference compressors, the newest roundtrip status and the bpb history.

A model that is not the run's own is recorded under its training step with its name in the
dataset label ("small-val[:2000] · model general-v1 (186335b9d17d)", worker.MODEL_TAG), so it never
replaces a row of the run's checkpoints and draws its own line in the history.
"""
from __future__ import annotations

import os
from pathlib import Path

import dash_bootstrap_components as dbc
import pandas as pd
from dash import Input, Output, State, ctx, html, no_update

from umoec import config as C
from umoec import sizing
from umoec.compress.evaluate import locate_data
from umoec.compress.worker import MODEL_TAG
from umoec.metrics import read
from umoec.run import RunDir

from ... import ids as common
from ...components.checkpoint_picker import register_model_dropdown
from ...components.job_status import alert, job_action, job_controls, job_outputs, register_job_view
from ...context import AppContext
from ...figures.base import empty_fig
from ...figures.compression import REFERENCE_BPB, eval_bpb_history_fig
from ...services import forge, models
from ...services.compress_jobs import ROOT, JobError, JobManager
from ...services.runs import resolve, summarise
from ...view.read_errors import db_read_error
from . import ids

METHOD_ORDER = ("gzip -9", "xz -9e", "zstd -19", "zstd -22", "brotli -11", "bzip3", "PPMd -o16",
                "zpaq -m4", "zpaq -m5", "paq9a", "xz -9e primed", "PPMd -o16 primed",
                "zpaq -m5 primed")
HEADER = ["Step", "Dataset", "BPB", "Model Size", "vs gzip (2.7)", "vs zstd-22 (1.95)",
          "vs CMIX (1.23)", "Delta from CMIX", "Roundtrip"]


def data_source_note(run: RunDir, root: Path = ROOT) -> str:
    """Which bytes an evaluation will read (umoec.compress.evaluate.locate_data, as the worker)."""
    try:
        choice = locate_data(run, root)
    except (C.ConfigError, OSError) as exc:
        return f"Data: enwik8 not found, and the run's config cannot be read ({exc})."
    if choice.source == "enwik8":
        return f"Data: enwik8 ({choice.path})."
    if choice.source == "val":
        return (f"Data: enwik8 not found (data/enwik8 or $ENWIK8), so the run's validation split "
                f"{choice.path}. For enwik8, unzip https://mattmahoney.net/dc/enwik8.zip "
                "into data/.")
    return (f"Data: neither enwik8 (data/enwik8, $ENWIK8) nor the run's validation split "
            f"({choice.val_path}) exists: the evaluation will fail until one does.")


def _params(n: int) -> str:
    return f"{n / 1e6:.2f} M" if n >= 1e5 else f"{n / 1e3:.1f} k"


def model_size(run: RunDir) -> str:
    """Parameters of the run's model (umoec.sizing on its config.yaml)."""
    try:
        return _params(sizing.total_params(C.load(run.config_path)))
    except Exception:  # a config this version cannot read: say so in the cell
        return "?"


def tagged_model(dataset: str) -> tuple[str, str]:
    """('small-val[:2000]', 'general-v1 (186335b9d17d)') for a row of a model that is not the
    run's own; (dataset, '') otherwise."""
    data, _, label = str(dataset).partition(MODEL_TAG)
    return data, label


def model_sizes(runs_dir: Path) -> dict[str, str]:
    """'name (hash12)' -> parameter count of every model on the search path (header info)."""
    try:
        found = models.model_entries(runs_dir)
    except OSError:
        return {}
    return {models.model_label(e.name, e.hash): _params(int(e.info["params"]))
            for e in found if isinstance(e.info.get("params"), int)}


def _vs(bpb: float, ref: float):
    rel = bpb / ref - 1.0
    return html.Td(f"{rel:+.0%}", className="text-success" if rel < 0 else "",
                   title=f"{bpb:.4f} bpb vs {ref} bpb")


def measured_methods(baselines: pd.DataFrame) -> list[str]:
    present = list(dict.fromkeys(baselines["method"])) if not baselines.empty else []
    return [m for m in METHOD_ORDER if m in present] + [m for m in present if m not in METHOD_ORDER]


def eval_table(evals: pd.DataFrame, baselines: pd.DataFrame, size: str,
               simulated: bool = False, sizes: dict | None = None) -> list:
    """thead + tbody of eval-results-table, newest evaluation first. size: the run's model size;
    sizes: 'name (hash12)' -> size of the other models' rows (model_sizes)."""
    methods = measured_methods(baselines)
    head = html.Thead([
        html.Tr([html.Th(h, rowSpan=2) for h in HEADER]
                + ([html.Th("measured on the same bytes (bpb)", colSpan=len(methods),
                            className="text-center")] if methods else [])),
        html.Tr([html.Th(m) for m in methods]),
    ])
    if evals.empty:
        return [head, html.Tbody(html.Tr(html.Td(
            "No evaluation of this run yet: choose a model (or a checkpoint of the run) and "
            "press Run enwik8 Eval.",
            colSpan=len(HEADER) + len(methods), className="text-muted")))]
    measured = {(int(r["step"]), r["dataset"], r["method"]):
                8.0 * float(r["compressed_bytes"]) / max(1.0, float(r["original_bytes"]))
                for r in baselines.to_dict("records")}
    rows = []
    for r in evals.sort_values(["ts", "step"], ascending=False).to_dict("records"):
        bpb, ok = float(r["bpb"]), bool(r["roundtrip_ok"])
        other = tagged_model(r["dataset"])[1]
        made_up = simulated and not other  # a model's evaluation is real even in a simulated run
        dataset = [str(r["dataset"]), " ", dbc.Badge("simulated", color="info")] if made_up \
            else str(r["dataset"])
        row_size = (sizes or {}).get(other, "?") if other else size
        measured_bpb = [measured.get((int(r["step"]), r["dataset"], m)) for m in methods]
        rows.append(html.Tr(
            [html.Td(f"{int(r['step']):,}"), html.Td(dataset), html.Td(f"{bpb:.4f}"), html.Td(row_size)]
            + [_vs(bpb, REFERENCE_BPB[k]) for k in ("gzip", "zstd-22", "CMIX")]
            + [html.Td(f"{bpb - REFERENCE_BPB['CMIX']:+.3f}"),
               html.Td(dbc.Badge("PASS" if ok else "FAIL", color="success" if ok else "danger"))]
            + [html.Td("" if v is None else f"{v:.3f}") for v in measured_bpb]))
    notes = []
    if any(tagged_model(d)[1] for d in evals["dataset"]):
        notes.append("Rows naming a model (· model NAME (HASH)) evaluated that coding model, not a "
                     "checkpoint of this run; Step is the step it was trained to.")
    if any(not str(d).startswith("enwik8") for d in evals["dataset"]):
        notes.append("The reference columns are published enwik8 figures; rows on other data "
                     "compare best with the measured columns (same bytes).")
    if any(m.endswith(" primed") for m in methods):
        notes.append("primed: what the compressor adds for these bytes after the run's own "
                     "training data (the tail of its train split): size(train + data) - "
                     "size(train), the fair comparison for a model trained on that data.")
    if simulated:
        notes.append("This run is simulated (bin.simulate_training): its own evaluations (rows "
                     "marked simulated) are made up, no bytes were compressed.")
    rows += [html.Tr(html.Td(n, colSpan=len(HEADER) + len(methods), className="text-muted small"))
             for n in notes]
    return [head, html.Tbody(rows)]


def roundtrip_badge(evals: pd.DataFrame, simulated: bool = False):
    """eval-roundtrip-status: PASS / FAIL of the newest evaluation."""
    if evals.empty:
        return html.Span("no evaluation yet", className="text-muted small")
    r = evals.sort_values(["ts", "step"]).iloc[-1]
    ok = bool(r["roundtrip_ok"])
    made_up = " (simulated)" if simulated and not tagged_model(r["dataset"])[1] else ""
    return html.Span([
        html.Span(("PASS" if ok else "FAIL") + made_up,
                  className="fw-bold " + ("text-success" if ok else "text-danger")),
        html.Span(f" step {int(r['step']):,}, {r['dataset']}", className="small text-muted"),
    ])


def do_eval_action(jobs: JobManager, runs_dir: Path, trigger, run_name, checkpoint, max_bytes,
                   profile, model=None) -> dict:
    def start(run: RunDir) -> None:
        if max_bytes is None or max_bytes == "":
            raise JobError("Max bytes must be a whole number >= 0 (0 = the whole file).")
        jobs.start_eval(run, checkpoint, max_bytes, profile, model=model)
    return job_action(jobs, runs_dir, run_name, "eval", start, cancel=trigger == ids.EVAL_CANCEL_BTN)


def register(app, cockpit: AppContext) -> None:
    runs_dir = cockpit.settings.runs_dir
    jobs = cockpit.jobs
    register_model_dropdown(app, runs_dir, common.EVAL_MODEL, ids.EVAL_MODEL_NOTE,
                            common.EVAL_CHECKPOINT, common.TAB_EVAL, prefer_checkpoint=True)

    @app.callback(Output(ids.EVAL_ACTION, "data"),
                  Input(ids.EVAL_ENWIK8_BTN, "n_clicks"), Input(ids.EVAL_CANCEL_BTN, "n_clicks"),
                  State(common.RUN_SELECT, "value"), State(common.EVAL_MODEL, "value"),
                  State(common.EVAL_CHECKPOINT, "value"), State(ids.EVAL_MAX_BYTES, "value"),
                  State(ids.EVAL_PROFILE, "value"), prevent_initial_call=True)
    def act(_e, _c, name, model, checkpoint, max_bytes, profile):
        return do_eval_action(jobs, runs_dir, ctx.triggered_id, name, checkpoint, max_bytes,
                              profile, model=model or "default")

    register_job_view(app, common.TAB_EVAL, REFRESH, [Input(ids.EVAL_ACTION, "data")],
                      ids.EVAL_VERSION, lambda *args: eval_view(jobs, runs_dir, *args))


# the refresh's outputs by name (eval_view returns them so; Dash's dict outputs)
REFRESH = {**job_outputs(ids.EVAL_STATUS, ids.EVAL_PROGRESS, "run_disabled", ids.EVAL_ENWIK8_BTN,
                         ids.EVAL_CANCEL_BTN),
           "data_note": (ids.EVAL_DATA_NOTE, "children"),
           "table": (ids.EVAL_RESULTS_TABLE, "children"),
           "roundtrip": (ids.EVAL_ROUNDTRIP_STATUS, "children"),
           "figure": (ids.EVAL_BPB_HISTORY, "figure"),
           "version": (ids.EVAL_VERSION, "data")}
EVAL_OUTPUTS = tuple(REFRESH)
VIEW_OUTPUTS = EVAL_OUTPUTS[6:]   # what stays as it is when nothing changed


def eval_view(jobs: JobManager, runs_dir: Path, name, action, seen: str | None) -> dict:
    """Every output of the Evaluation tab's refresh, by name (EVAL_OUTPUTS; a plain function:
    tests call it)."""
    run = resolve(runs_dir, name)
    controls = job_controls(jobs.latest(name, "eval"), action, "run_disabled")
    no_evals = dict(data_note="", table=eval_table(pd.DataFrame(), pd.DataFrame(), ""),
                    roundtrip=roundtrip_badge(pd.DataFrame()))
    if run is None:
        msg = (forge.not_usable_here(runs_dir, name, "evaluation")
               or "No run selected: choose one in the top bar.")
        return dict(controls, **no_evals, status=controls["status"] or alert(msg, "secondary"),
                    run_disabled=True, cancel_disabled=True,
                    figure=eval_bpb_history_fig(pd.DataFrame()), version=None)
    try:
        with read.open_db(run.db_path) as conn:
            evals, baselines = read.eval_results(conn), read.eval_baselines(conn)
    except FileNotFoundError:
        evals = pd.DataFrame(columns=read.EVAL_COLUMNS)
        baselines = pd.DataFrame(columns=read.BASELINE_COLUMNS)
    except read.READ_ERRORS as exc:
        err = alert(db_read_error(run.db_path, exc), "danger")
        if read.transient(exc):
            return dict(controls, **dict.fromkeys(VIEW_OUTPUTS, no_update), status=err)
        # a damaged database: nothing of the previously shown run stays under this run's name
        return dict(controls, **no_evals, status=err, version=f"unreadable {name}",
                    figure=empty_fig("This run's metrics.db cannot be read", height=360))
    try:
        config_mtime = run.config_path.stat().st_mtime
    except OSError:
        config_mtime = None
    version = repr([name, evals.values.tolist(), len(baselines), config_mtime,
                    os.environ.get("ENWIK8"), (ROOT / "data" / "enwik8").is_file()])
    if version == seen:
        return dict(controls, **dict.fromkeys(VIEW_OUTPUTS, no_update))
    simulated = summarise(run).simulated
    real = [d for d in evals["dataset"] if tagged_model(d)[1]]
    return dict(controls, data_note=data_source_note(run),
                table=eval_table(evals, baselines, model_size(run), simulated,
                                 model_sizes(runs_dir) if real else {}),
                roundtrip=roundtrip_badge(evals, simulated),
                figure=eval_bpb_history_fig(evals, baselines, simulated, real=real),
                version=version)
