"""Training tab: KPIs, ETA, live charts, head losses, checkpoints (with their coding models or
an Export model button: model_export.py), resume list, log.

The loss, lr and throughput charts are drawn once (smoothing on every row, traces downsampled to
about series.MAX_POINTS points), then only extended by `dash.Patch` with the rows newer than the
page's (live.py). They are redrawn when the run, its generation (a resume rewrites rows), the
smoothing or log y changes, or when enough points were appended to downsample again. The
checkpoint markers under the loss curves are replaced in the same Patch when the run's
checkpoints change; a click on one selects it (checkpoint_select.py).
`training_update` is the callback body as a plain function (tests and bench/bench_gui.py call it).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import dash_bootstrap_components as dbc
from dash import Input, Output, Patch, State, html, no_update
from dash.exceptions import PreventUpdate

from umoec import config as C
from umoec.metrics import read
from umoec.run import RunState
from umoec.run.forge import log_text
from umoec.units import LN2, fmt_bytes

from ... import ids as common
from ... import report
from ...components.visible import visible_only
from ...context import AppContext
from ...figures.base import empty_fig
from ...figures.series import MAX_POINTS, Smoothing, ema, smooth_continue
from ...figures.training import (
    CHECKPOINT_TRACE,
    checkpoint_points,
    loss_fig,
    lr_grad_fig,
    system_fig,
    throughput_fig,
)
from ...services import models
from ...services.forge import resolve_any
from ...services.runs import resolve, summarise
from ...services.series import cached_train_series
from ...view.checkpoints import pick
from ...view.read_errors import db_read_error
from ...view.training import fmt_duration, step_rate
from . import ids
from .forge import KEYS as FORGE_KEYS
from .forge import forge_training_update
from .layout import RESUME_HIDDEN, RESUME_SHOWN, checkpoint_table, clock, kpi_card
from .live import REDRAW_AFTER, extend_train, extend_val
from .zoom import keep_zoom

EMPTY_RUNS_HINT = "No run selected. Create one with: python -m bin.simulate_training --steps 5000 --out {}"


def kpis(latest: dict | None, total_steps: int) -> list:
    if latest is None:
        return [dbc.Col(html.Div("No metrics yet.", className="text-muted"))]
    return [
        kpi_card("step", f"{int(latest['step']):,}", f"of {total_steps:,}" if total_steps else ""),
        kpi_card("train bpb", f"{latest['bpb']:.3f}", f"loss {latest['loss']:.4f} nats/byte"),
        kpi_card("learning rate", f"{latest['lr']:.2e}", "AdamW group"),
        kpi_card("bytes / s", f"{latest['tokens_per_sec']:,.0f}", "training throughput"),
        kpi_card("grad norm", f"{latest['grad_norm']:.3f}", "before clipping"),
        kpi_card("bytes seen", fmt_bytes(latest["bytes_seen"]),
                 f"elapsed {fmt_duration(latest['elapsed_s'])}"),
    ]


def eta_text(train, state: RunState, total_steps: int, resuming: bool = False) -> str:
    """Remaining time from the recent step rate (last ~20 logged rows)."""
    if train.empty:
        return ""
    if resuming:  # the old process's rate and step count say nothing about the new one yet
        return "ETA: resuming, waiting for the new process's first step..."
    if state is not RunState.RUNNING:
        return f"Run is {state.value}; no ETA."
    recent = train.tail(20)
    rate = step_rate(recent)
    if rate is None:
        return "ETA: measuring..."
    left = max(0, total_steps - int(recent["step"].iloc[-1]))
    return f"ETA {fmt_duration(left / rate)} ({rate:.2f} steps/s, {left:,} steps left)"


def heads_table(heads) -> object:
    if heads.empty:
        return html.Div("No per-head losses yet.", className="text-muted")
    rows = [html.Tr([html.Td(h), html.Td(f"{loss:.4f}"), html.Td(f"{loss / LN2:.3f}")])
            for h, loss in zip(heads["head"], heads["loss"], strict=True)]
    return dbc.Table([html.Thead(html.Tr([html.Th("head"), html.Th("loss (nats)"),
                                          html.Th("bpb")])), html.Tbody(rows)],
                     size="sm", striped=True, class_name="mb-0")


def export_button(c, text: str) -> dbc.Button:
    return dbc.Button(text, id={"type": ids.CHECKPOINT_EXPORT_BTN, "index": c.path.name},
                      size="sm", color="secondary", outline=True, class_name="py-0 px-2",
                      title=f"write the coding model models/step{c.step:06d}.umm of this run "
                            "(a background job)")


def export_cell(c, exported: dict | None, simulated: bool = False) -> object:
    """The coding model of checkpoint `c` (RUN/models/stepNNNNNN.umm) or an Export model button."""
    if simulated:
        return html.Span("simulated, no weights", className="text-muted small")
    if not exported:
        return export_button(c, "Export model")
    if exported.get("error"):
        return html.Div([html.Div(exported["error"], className="text-danger small"),
                         export_button(c, "Export again")])
    if exported.get("stale"):
        return html.Div([html.Span(f"{exported['label']} (older than the checkpoint) ",
                                   className="small text-muted"), export_button(c, "Export again")])
    return html.Span(exported["label"], className="small font-monospace text-success",
                     title="coding model exported from this checkpoint: listed in the "
                           "Compression and Evaluation tabs")


def checkpoint_models(run, cks) -> dict[str, dict]:
    """file name -> models.exported_model of each checkpoint (RUN/models/stepNNNNNN.umm)."""
    return {c.path.name: models.exported_model(run, c.step, c.mtime) for c in cks}


def checkpoint_list(cks, exported: dict | None = None, simulated: bool = False) -> object:
    """Table of the run's checkpoints, newest first; with `exported` (checkpoint_models) a model
    column: the exported coding model or an Export model button."""
    if not cks:
        return html.Div("No checkpoints yet.", className="text-muted")
    with_models = exported is not None
    rows = [(f"{c.step:,}", c.size, c.mtime, c.path.name)
            + ((export_cell(c, exported.get(c.path.name), simulated),) if with_models else ())
            for c in reversed(cks)]
    return checkpoint_table(rows, ("coding model",) if with_models else ())


def checkpoint_options(cks) -> list[dict]:
    return [{"label": f"step {c.step:,} ({fmt_bytes(c.size)}, {clock(c.mtime)})",
             "value": c.path.name} for c in reversed(cks)]


def _mtime(path: Path) -> float | None:
    try:
        return path.stat().st_mtime
    except OSError:
        return None


def db_error_text(path: Path, exc: BaseException) -> str:
    """What a user can do about a metrics database that cannot be read."""
    if isinstance(exc, FileNotFoundError):
        return (f"No metrics database yet at {path}: the run has not logged its first step, or "
                "its folder is incomplete.")
    return db_read_error(path, exc)


def _read_log(run, state: dict | None) -> tuple[Any, list | None]:
    """(log tail or no_update, signature) - unchanged files are not sent again."""
    try:
        st = run.log_path.stat()
        sig = [st.st_size, st.st_mtime]
        if state and state.get("log_sig") == sig:
            return no_update, sig
        lines = run.tail_log(100)
    except FileNotFoundError:
        return "(training.log does not exist yet)", None
    except OSError as exc:
        return f"(cannot read training.log: {exc.strerror or exc})", None
    return ("\n".join(lines) or "(training.log is empty)"), sig


def grad_clip_of(run) -> float | None:
    """The run's gradient-clipping threshold (training.grad_clip; None when off or unreadable)."""
    try:
        clip = float(C.load(run.config_path).training.grad_clip)
    except (OSError, C.ConfigError, ValueError):
        return None
    return clip if clip > 0 else None


CHART_COLUMNS = ("step", "bpb", "lr", "grad_norm", "tokens_per_sec")


def marker_rows(cks) -> list[tuple]:
    """The run's checkpoints as the loss chart's markers take them (CHECKPOINT_COLUMNS)."""
    return [(c.step, c.path.name, c.size, c.mtime) for c in cks]


def _full_charts(conn, path: Path, smoothing: Smoothing, log_y: bool,
                 grad_clip: float | None = None,
                 cks: tuple = ()) -> tuple[object, object, object, dict]:
    """(loss, lr, throughput figures, chart state): every row (cached_train_series), drawn anew;
    the loss smoothed once, for the chart and for the state its live extension carries on."""
    train = cached_train_series(conn, path, CHART_COLUMNS)
    val = read.val_metrics(conn)
    line, carry = (smooth_continue(train["bpb"].to_numpy(dtype=float), smoothing)
                   if not train.empty else (None, {}))
    loss = loss_fig(train, val, smoothing, log_y, max_points=MAX_POINTS,
                    checkpoints=marker_rows(cks), smoothed=line)
    lr = lr_grad_fig(train, max_points=MAX_POINTS, grad_clip=grad_clip)
    throughput = throughput_fig(train, max_points=MAX_POINTS)
    if train.empty:
        return loss, lr, throughput, {}
    best = float(val["bpb"].min()) if not val.empty else None
    return loss, lr, throughput, {
        "last_step": int(train["step"].iloc[-1]),
        "last_val_step": int(val["step"].iloc[-1]) if not val.empty else -1,
        "smooth": carry,
        "best_val": best, "points": min(len(train), MAX_POINTS)}


def _patch_charts(conn, state: dict, smoothing: Smoothing) -> tuple[Any, Any, Any, dict]:
    """Extend the charts with rows newer than the page has; no_update when there are none."""
    new = read.train_series(conn, CHART_COLUMNS, since_step=state["last_step"])
    val = read.val_metrics(conn, since_step=state["last_val_step"])
    if new.empty and val.empty:
        return no_update, no_update, no_update, state
    state = dict(state)
    loss, lr, throughput = extend_train(new, new["bpb"].to_numpy(dtype=float), smoothing, state)
    if not val.empty:
        i = val["bpb"].idxmin()
        low = float(val.loc[i, "bpb"])
        better = state.get("best_val") is None or low < state["best_val"]
        extend_val(loss, val["step"], val["bpb"], (val.loc[i, "step"], low) if better else None)
        if better:
            state["best_val"] = low
        state["last_val_step"] = int(val["step"].iloc[-1])
    return loss, lr, throughput, state


def training_update(runs_dir: Path, name: str | None, smoothing: float = 0.6,
                    log_y: bool = False, state: dict | None = None,
                    checkpoint: str | None = None, launched: Any = None,
                    method: str = "ema", clip: bool = False) -> dict[str, Any]:
    """Everything the training tab shows for run `name`, given what the page already has.
    `launched`: the Launcher's entry for the run (a resumed run's gap before its first status).
    `smoothing`, `method`, `clip`: the loss chart's smoothing controls (series.Smoothing)."""
    spec = Smoothing.of(method, smoothing, clip)
    log_y = bool(log_y)
    run, forge_run = resolve_any(runs_dir, name)
    if forge_run is not None:  # a Forge run folder, read-only
        return forge_training_update(forge_run, spec, log_y, state)
    if run is None:
        empty = empty_fig("No run selected")
        return dict(kpis=[], eta="", loss=empty, lr=empty, throughput=empty, heads="",
                    checkpoints="", log="",
                    error=dbc.Alert(EMPTY_RUNS_HINT.format(Path(runs_dir) / "demo"), color="info"),
                    state=None, ck_options=[], ck_value=None)
    summary = summarise(run, launched=launched)
    same_run = state if state and state.get("run") == name else None
    cks = run.checkpoints()
    ck_names = [c.path.name for c in cks]
    ck_sig = [[c.step, c.size, c.mtime, _mtime(run.model_path(c.step))] for c in cks]
    if same_run and same_run.get("ck_sig") == ck_sig and (checkpoint in ck_names or not cks):
        out = dict(checkpoints=no_update, ck_options=no_update, ck_value=no_update)
    else:
        # the picker follows the newest checkpoint while it shows the newest (a stop's checkpoint
        # must be what Resume takes next); an older one the user picked stays picked
        prev = (same_run or {}).get("ck_sig") or []
        steps = {c.path.name: c.step for c in cks}
        follows = bool(prev) and steps.get(checkpoint) == prev[-1][0]
        ck_value = checkpoint if checkpoint in ck_names and not follows else \
            (ck_names[-1] if ck_names else None)
        out = dict(checkpoints=checkpoint_list(cks, checkpoint_models(run, cks),
                                               summary.simulated),
                   ck_options=checkpoint_options(cks), ck_value=ck_value)
    out["log"], log_sig = _read_log(run, same_run)
    try:
        with read.open_db(run.db_path) as conn:
            gen = read.run_generation(conn)
            latest = read.latest_metrics(conn)
            same = (same_run is not None and state.get("gen") == gen
                    and Smoothing.from_state(state) == spec and state.get("log_y") == log_y
                    and "last_step" in state and "smooth" in state and latest is not None
                    and latest["step"] >= state["last_step"] and state.get("points", 0) < REDRAW_AFTER)
            if same:
                loss, lr, throughput, chart = _patch_charts(conn, state, spec)
                if state.get("ck_sig") != ck_sig:  # a checkpoint written, or deleted
                    loss = loss if loss is not no_update else Patch()
                    for key, value in checkpoint_points(marker_rows(cks)).items():
                        loss["data"][CHECKPOINT_TRACE][key] = value
            else:
                loss, lr, throughput, chart = _full_charts(conn, run.db_path, spec, log_y,
                                                           grad_clip_of(run), cks)
            recent = read.recent_train_metrics(conn, 20)
            heads = read.head_losses_at(conn)
    except read.OPEN_ERRORS as exc:
        empty = empty_fig("Metrics unavailable")
        colour = "info" if isinstance(exc, FileNotFoundError) else "danger"
        text = db_error_text(run.db_path, exc)
        if summary.state is RunState.CRASHED:  # the reason belongs here, not only in the sidebar
            colour = "danger"
            text = (f"The run crashed before its first logged step ({summary.detail}); the log "
                    "below says more.")
        return dict(out, kpis=[], eta="", loss=empty, lr=empty, throughput=empty, heads="",
                    error=dbc.Alert(text, color=colour, class_name="py-2 mb-2"),
                    state={"run": name, "log_sig": log_sig, "ck_sig": ck_sig})
    new_state = {**chart, **spec.as_state(), "run": name, "gen": gen, "log_y": log_y,
                 "log_sig": log_sig, "ck_sig": ck_sig}
    return dict(out, kpis=kpis(latest, summary.total_steps),
                eta=eta_text(recent, summary.state, summary.total_steps, summary.resuming),
                loss=loss, lr=lr, throughput=throughput,
                heads=heads_table(heads), error=None, state=new_state)


def metrics_csv(runs_dir: Path, name: str | None, smoothing: float = 0.6) -> dict | None:
    """The selected run's metrics as a dcc.Download dict: every logged row (with its EMA at the
    chart's smoothing and the step's validation bpb), or a Forge run's own log.csv; None when
    there is nothing readable."""
    run, forge_run = resolve_any(runs_dir, name)
    if run is None:
        text = None if forge_run is None else log_text(forge_run.log_path)
        return None if text is None else {"content": text, "type": "text/csv",
                                          "filename": f"{forge_run.path.name}-log.csv"}
    try:
        with read.open_db(run.db_path) as conn:
            table = read.metrics_export(conn)
    except read.OPEN_ERRORS:
        return None
    if table.empty:
        return None
    smoothing = min(0.999, max(0.0, float(smoothing or 0.0)))
    table.insert(table.columns.get_loc("bpb") + 1, f"bpb_ema_{smoothing:.2f}",
                 ema(table["bpb"].to_numpy(dtype=float), smoothing))
    return {"content": table.to_csv(index=False), "filename": f"{run.name}-metrics.csv",
            "type": "text/csv"}


def system_update(runs_dir: Path, name: str | None, seen: dict | None) -> tuple[Any, Any]:
    """(system figure or no_update, new state): redrawn only when the run or its newest sample
    changed (a few hundred rows at most, downsampled; cheaper than patching)."""
    run, forge_run = resolve_any(runs_dir, name)
    if run is None:
        fig = empty_fig("Forge runs log no system metrics" if forge_run
                        else "No run selected", height=240)
        return fig, {"run": name}
    try:
        with read.open_db(run.db_path) as conn:
            system = read.system_metrics(conn)
    except read.OPEN_ERRORS:
        return empty_fig("Metrics unavailable", height=240), {"run": name}
    key = {"run": name, "rows": len(system),
           "last": int(system["step"].iloc[-1]) if len(system) else None}
    if seen == key:
        return no_update, no_update
    return system_fig(system, max_points=MAX_POINTS), key


def report_download(runs_dir: Path, name: str | None) -> dict | None:
    """The selected run's HTML report as a dcc.Download dict; None for a Forge or unreadable run."""
    run = resolve(runs_dir, name)
    if run is None:
        return None
    try:
        text = report.run_report(run, grad_clip_of(run))
    except report.READ_ERRORS:
        return None
    return {"content": text, "filename": f"{run.name}-report.html", "type": "text/html"}


def resume_controls_class(runs_dir: Path, name: str | None) -> str:
    """The checkpoint picker and Resume button: hidden for a (read-only) Forge run."""
    return RESUME_HIDDEN if resolve_any(runs_dir, name)[1] is not None else RESUME_SHOWN


XSYNC_JS = """function() {
    const nu = window.dash_clientside.no_update;
    const trig = (window.dash_clientside.callback_context.triggered || [])[0];
    if (!trig || !trig.value) return nu;
    const src = trig.prop_id.split('.')[0], ev = trig.value;
    let upd = null;
    if (src === %s || ev['xaxis.autorange']) upd = {'xaxis.autorange': true};  // another run: all of it
    else if ('xaxis.range[0]' in ev) upd = {'xaxis.range': [ev['xaxis.range[0]'], ev['xaxis.range[1]']]};
    else if (ev['xaxis.range']) upd = {'xaxis.range': ev['xaxis.range'].slice(0, 2)};
    if (!upd) return nu;
    const same = (a, b) => Math.abs(Number(a) - Number(b)) <= 1e-9 * Math.max(1, Math.abs(Number(a)));
    for (const id of %s) {
        if (id === src || (src === %s && id === %s)) continue;   // the server resets the loss chart
        const gd = document.querySelector('#' + id + ' .js-plotly-plot');
        if (!gd || !gd.data || !gd.data.length || !gd.layout || !gd.layout.xaxis) continue;
        const ax = gd.layout.xaxis;
        if (upd['xaxis.autorange'] ? ax.autorange === true :
            (ax.autorange !== true && ax.range && same(ax.range[0], upd['xaxis.range'][0]) &&
             same(ax.range[1], upd['xaxis.range'][1]))) continue;
        window.Plotly.relayout(gd, upd);
    }
    return upd['xaxis.range'] || 'auto';
}""" % (  # noqa: UP031 (JavaScript braces)
    json.dumps(common.RUN_SELECT), json.dumps(list(ids.TRAINING_SHARED_X)), json.dumps(common.RUN_SELECT),
    json.dumps(ids.TRAINING_LOSS))


# training_update's outputs by name (the Forge view returns the same keys: forge.KEYS)
UPDATE = {"kpis": (ids.TRAINING_KPIS, "children"), "eta": (ids.TRAINING_ETA, "children"),
          "loss": (ids.TRAINING_LOSS, "figure"), "lr": (ids.TRAINING_LR, "figure"),
          "throughput": (ids.TRAINING_THROUGHPUT, "figure"),
          "heads": (ids.TRAINING_HEADS, "children"), "checkpoints": (ids.CHECKPOINT_LIST, "children"),
          "log": (ids.LOG_TAIL, "children"), "error": (ids.TRAINING_ERROR, "children"),
          "state": (ids.TRAINING_CHART_STATE, "data"),
          "ck_options": (common.RESUME_CHECKPOINT, "options"),
          "ck_value": (common.RESUME_CHECKPOINT, "value")}
assert tuple(UPDATE) == FORGE_KEYS
# the refresh's outputs (Dash's dict outputs): those, the resume controls' class and the resume
# picker's seen stamp
REFRESH = {**UPDATE, "resume_class": (ids.RESUME_CONTROLS, "className"),
           "seen": (common.pick_seen(common.RESUME_CHECKPOINT), "data")}


def apply_selection(out: dict, name: str | None, options: list | None, current: Any,
                    selected: Any, seen: Any) -> Any:
    """The resume picker takes a checkpoint selected on the loss chart (view/checkpoints.pick):
    sets out["ck_value"] and returns the picker's new seen stamp. `options`, `current`: what
    the page shows, for outputs training_update left unchanged."""
    shown = out["ck_options"] if out["ck_options"] is not no_update else (options or [])
    value = out["ck_value"] if out["ck_value"] is not no_update else current
    picked, seen_now = pick(selected, seen, name, [o["value"] for o in shown], value)
    if picked != value:
        out["ck_value"] = picked
    return seen_now


def register(app, cockpit: AppContext) -> None:
    runs_dir = cockpit.settings.runs_dir
    launcher = cockpit.launcher
    outputs = {k: Output(*target) for k, target in REFRESH.items()}

    @app.callback(Output(ids.TRAINING_SYSTEM, "figure"), Output(ids.TRAINING_SYSTEM_STATE, "data"),
                  Input(common.tab_tick(common.TAB_TRAINING), "data"), Input(common.RUN_SELECT, "value"),
                  Input(common.TABS, "active_tab"), State(ids.TRAINING_SYSTEM_STATE, "data"))
    @visible_only(common.TAB_TRAINING)
    def refresh_system(_n, name, _tab, seen):
        figure, state = system_update(runs_dir, name, seen)
        if figure is no_update:
            raise PreventUpdate
        return figure, state

    @app.callback(Output(ids.TRAINING_REPORT, "data"), Input(ids.TRAINING_REPORT_BTN, "n_clicks"),
                  State(common.RUN_SELECT, "value"), prevent_initial_call=True)
    def export_report(_n, name):
        out = report_download(runs_dir, name)
        if out is None:
            raise PreventUpdate
        return out

    @app.callback(Output(ids.TRAINING_CSV, "data"), Input(ids.TRAINING_CSV_BTN, "n_clicks"),
                  State(common.RUN_SELECT, "value"), State(ids.TRAINING_SMOOTHING, "value"),
                  prevent_initial_call=True)
    def export_csv(_n, name, smoothing):
        out = metrics_csv(runs_dir, name, smoothing)
        if out is None:
            raise PreventUpdate
        return out

    # The Training charts share their x axis (all are against step): a zoom, pan or double-click
    # on one is applied to the others in the page, and another run starts them whole. A chart
    # already showing that range is left alone, which ends the echo of its own relayout event;
    # the loss chart's relayout then asks the server for its re-aggregated window as for a zoom
    # made on it.
    app.clientside_callback(XSYNC_JS, Output(ids.TRAINING_XSYNC, "data"),
                            *(Input(g, "relayoutData") for g in ids.TRAINING_SHARED_X),
                            Input(common.RUN_SELECT, "value"), prevent_initial_call=True)

    # "none" smooths nothing, so its strength slider is greyed out (in the page: no request)
    app.clientside_callback("function(method) { return method === 'none'; }",
                            Output(ids.TRAINING_SMOOTHING, "disabled"),
                            Input(ids.TRAINING_SMOOTH_METHOD, "value"))

    @app.callback(output=outputs,
                  inputs=[Input(common.tab_tick(common.TAB_TRAINING), "data"),
                          *(Input(i, "value") for i in (common.RUN_SELECT, ids.TRAINING_SMOOTHING,
                                                        ids.TRAINING_LOGY, ids.TRAINING_SMOOTH_METHOD,
                                                        ids.TRAINING_CLIP)),
                          Input(common.TABS, "active_tab"), Input(common.SELECTED_CHECKPOINT, "data")],
                  state=[State(ids.TRAINING_CHART_STATE, "data"), State(common.RESUME_CHECKPOINT, "value"),
                         State(ids.RESUME_CONTROLS, "className"),
                         State(common.RESUME_CHECKPOINT, "options"),
                         State(common.pick_seen(common.RESUME_CHECKPOINT), "data"),
                         State(ids.TRAINING_ZOOM, "data")])
    @visible_only(common.TAB_TRAINING)
    def refresh(_n, name, smoothing, log_y, method, clip, _tab, selected, state, checkpoint,
                resume_class, options, seen, zoom):
        launched = launcher.get(name) if launcher is not None else None
        out = training_update(runs_dir, name, smoothing, log_y, state, checkpoint, launched,
                              method, clip)
        keep_zoom(runs_dir, out, name, zoom)
        new_seen = apply_selection(out, name, options, checkpoint, selected, seen)
        shown = resume_controls_class(runs_dir, name)
        return dict(out, resume_class=no_update if shown == resume_class else shown,
                    seen=no_update if new_seen == seen else new_seen)
