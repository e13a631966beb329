"""Datasets tab: list, preview, "use in config editor", and new-dataset builds with a
live console. gui/services/datasets.py does the work; bodies are module functions the tests call."""
from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import dash_bootstrap_components as dbc
from dash import Input, Output, State, ctx, html, no_update

from umoec.units import fmt_bytes

from ... import ids as common
from ...components.visible import visible_only
from ...context import AppContext
from ...services import datasets as D
from ..base import bad, ok
from . import ids

LEVEL_CLASS = {"running": "text-primary", "ok": "text-success", "failed": "text-danger"}


def _cell_status(d: D.DatasetInfo, building: set[str]) -> Any:
    if d.name in building:
        return dbc.Badge("building", color="info")
    if d.ok:
        return dbc.Badge("ok", color="success")
    return bad(d.problem)


def list_view(data_dir: Path, runs_dir: Path, building: set[str]) -> dict[str, Any]:
    """The table of datasets, which runs use which, and the select's options."""
    datasets = D.list_datasets(data_dir)
    runs = D.run_datasets(runs_dir)
    usage = D.usage_by_dataset(datasets, runs)
    complete = [d for d in datasets if d.ok]
    n = len(complete)
    note = (f"Datasets folder: {data_dir} - {n} dataset{'s' if n != 1 else ''}"
            + (f", {len(datasets) - n} incomplete or damaged" if len(datasets) > n else ""))
    if not datasets:
        table = dbc.Alert(["No datasets yet in ", html.Code(str(data_dir)), ". Create one below "
                           "(or run ", html.Code("python -m bin.prepare_data --out "
                                                 f"{data_dir}/default"), ")."],
                          color="secondary", class_name="small mb-0")
    else:
        head = html.Thead(html.Tr([html.Th(h) for h in (
            "name", "files", "bytes", "train / val", "created", "kind", "used by", "status")]))
        rows = []
        for d in datasets:
            split = (f"{fmt_bytes(d.train_bytes)} ({d.train_docs} docs) / "
                     f"{fmt_bytes(d.val_bytes)} ({d.val_docs} docs)") if d.ok else ""
            rows.append(html.Tr([
                html.Td(html.Strong(d.name)), html.Td(f"{d.files:,}" if d.ok else ""),
                html.Td(fmt_bytes(d.total_bytes) if d.ok else ""), html.Td(split),
                html.Td(d.created), html.Td(d.kind), html.Td(", ".join(usage.get(d.name, []))),
                html.Td(_cell_status(d, building)),
            ], **{"data-dataset": d.name}))
        table = dbc.Table([head, html.Tbody(rows)], size="sm", hover=True, responsive=True,
                          class_name="small mb-0")
    known = {d.path.resolve() for d in datasets}
    run_rows = [html.Li([html.Strong(name), ": ", html.Code(text or "(no data.path)"),
                         "" if folder is not None and folder in known else
                         html.Span(" (not in the datasets folder)" if folder is None
                                   or folder.is_dir() else " (missing)",
                                   className="text-muted")])
                for name, text, folder in runs]
    usage_block = html.Div([html.Div("Dataset of each run (data.path of its config.yaml):",
                                     className="text-muted"), html.Ul(run_rows, className="mb-0")]
                           ) if run_rows else html.Div("No runs yet.", className="text-muted")
    options = [{"label": d.name + ("" if d.ok else " (incomplete)"), "value": d.name}
               for d in datasets]
    return {"note": note, "table": table, "usage": usage_block, "options": options,
            "default": complete[0].name if complete else None}


def preview_view(data_dir: Path, name: str | None) -> dict[str, Any]:
    folder = D.resolve_dataset(data_dir, name)
    if folder is None:
        return {"preview": html.Span("Choose a dataset to preview it.", className="text-muted"),
                "files": None, "use_disabled": True}
    info = D.read_dataset(folder)
    which, text = D.preview_sample(folder)
    parts = []
    if not info.ok:
        parts.append(dbc.Alert(info.problem, color="danger", class_name="small py-1 mb-2"))
    if text:
        parts += [html.Div(f"First {D.PREVIEW_BYTES // 1024} KB of {which} (non-printable bytes "
                           "escaped):", className="small text-muted"),
                  html.Pre(text, className="dataset-preview border rounded p-2 mb-0")]
    else:
        parts.append(html.Div("No sample: val.bin and train.bin are missing or empty.",
                              className="small text-muted"))
    rows, total = D.file_list(folder)
    files = None
    if rows:
        body = [html.Tr([html.Td(r["split"]), html.Td(f"{r['bytes']:,}"),
                         html.Td(r["path"], className="text-break")]) for r in rows]
        more = f" (first {len(rows)} shown)" if total > len(rows) else ""
        files = html.Div([
            html.Div(f"{total:,} files{more}", className="small text-muted"),
            html.Div(dbc.Table([html.Thead(html.Tr([html.Th("split"), html.Th("bytes"),
                                                    html.Th("path")])), html.Tbody(body)],
                               size="sm", class_name="small mb-0"),
                     style={"maxHeight": "240px", "overflowY": "auto"})])
    return {"preview": html.Div(parts), "files": files, "use_disabled": not info.ok}


def use_dataset(data_dir: Path, name: str | None) -> tuple[Any, Any]:
    """(config-inject data, message) for "Use in config editor"."""
    folder = D.resolve_dataset(data_dir, name)
    if folder is None or not D.read_dataset(folder).ok:
        return no_update, bad("Choose a complete dataset first.")
    value = D.config_path_value(folder)
    inject = {"values": {"data.path": value}, "source": f"Datasets ({name})", "ts": time.time()}
    return inject, ok(["data.path = ", html.Code(value), " sent to the config editor."])


def _build_view(job: D.BuildJob, polling: bool) -> dict:
    level, text = job.outcome()
    return {"console": job.tail(), "msg": html.Span(text, className=LEVEL_CLASS[level]),
            "poll_disabled": not polling, "cancel_disabled": not polling}


def start_build(builder: D.DatasetBuilder, name, sources, val_fraction, max_bytes) -> dict:
    try:
        job = builder.start(name, sources, val_fraction, max_bytes)
    except D.BuildError as exc:
        return {"job": no_update, "msg": bad(str(exc)),
                "poll_disabled": True, "console": no_update, "cancel_disabled": True}
    return {"job": job.name, **_build_view(job, polling=True)}   # the poll sees it end


def poll_build(builder: D.DatasetBuilder, name: str | None) -> dict:
    job = builder.get(name)
    if job is None:
        return {"console": no_update, "msg": no_update, "poll_disabled": True,
                "cancel_disabled": True, "version": no_update}
    alive = job.alive
    return {**_build_view(job, polling=alive),
            "version": no_update if alive else {"name": job.name, "ended": job.ended}}


# -- wiring -----------------------------------------------------------------------------------------
def register(app, cockpit: AppContext) -> None:
    runs_dir = cockpit.settings.runs_dir
    data_dir, builder = cockpit.settings.data_dir, cockpit.datasets

    @app.callback(Output(ids.DATASETS_NOTE, "children"), Output(ids.DATASETS_TABLE, "children"),
                  Output(ids.DATASETS_RUNS, "children"), Output(ids.DATASETS_SELECT, "options"),
                  Output(ids.DATASETS_SELECT, "value"),
                  Input(common.tab_tick(common.TAB_DATASETS), "data"), Input(common.TABS, "active_tab"),
                  Input(ids.DATASETS_VERSION, "data"), State(ids.DATASETS_SELECT, "value"),
                  State(ids.DATASETS_SELECT, "options"))
    @visible_only(common.TAB_DATASETS, unless=ids.DATASETS_VERSION)  # a build ended: list it
    def refresh_list(_n, _tab, version, current, current_options):
        view = list_view(data_dir, runs_dir, builder.building())
        names = [o["value"] for o in view["options"]]
        if ctx.triggered_id == ids.DATASETS_VERSION and isinstance(version, dict) \
                and version.get("name") in names:
            value = version["name"]  # a build just ended: show what it made
        elif current in names:
            value = no_update
        else:
            value = view["default"]
        options = view["options"] if view["options"] != current_options else no_update
        return view["note"], view["table"], view["usage"], options, value

    @app.callback(Output(ids.DATASETS_PREVIEW, "children"), Output(ids.DATASETS_FILES, "children"),
                  Output(ids.DATASETS_USE, "disabled"), Input(ids.DATASETS_SELECT, "value"),
                  Input(ids.DATASETS_VERSION, "data"))
    def show_preview(name, _version):
        view = preview_view(data_dir, name)
        return view["preview"], view["files"], view["use_disabled"]

    @app.callback(Output(common.CONFIG_INJECT, "data", allow_duplicate=True),
                  Output(ids.DATASETS_USE_MSG, "children"),
                  Input(ids.DATASETS_USE, "n_clicks"), State(ids.DATASETS_SELECT, "value"),
                  prevent_initial_call=True)
    def use(_n, name):
        return use_dataset(data_dir, name)

    build = {"msg": (ids.DATASETS_BUILD_MSG, "children"), "console": (ids.DATASETS_CONSOLE, "children"),
             "poll_disabled": (ids.DATASETS_POLL, "disabled"),
             "cancel_disabled": (ids.DATASETS_CANCEL, "disabled")}

    @app.callback(output={"job": Output(ids.DATASETS_JOB, "data"),
                          **{k: Output(*t) for k, t in build.items()}},
                  inputs=[Input(ids.DATASETS_CREATE, "n_clicks")],
                  state=[State(ids.DATASETS_NEW_NAME, "value"), State(ids.DATASETS_NEW_SOURCES, "value"),
                         State(ids.DATASETS_NEW_VAL, "value"), State(ids.DATASETS_NEW_MAX, "value")],
                  prevent_initial_call=True)
    def create(_n, name, sources, val_fraction, max_bytes):
        return start_build(builder, name, sources, val_fraction, max_bytes)

    @app.callback(output={"version": Output(ids.DATASETS_VERSION, "data"),
                          **{k: Output(*t, allow_duplicate=True) for k, t in build.items()}},
                  inputs=[Input(ids.DATASETS_POLL, "n_intervals")],
                  state=[State(ids.DATASETS_JOB, "data")], prevent_initial_call=True)
    def poll(_n, name):
        return poll_build(builder, name)

    @app.callback(Output(ids.DATASETS_BUILD_MSG, "children", allow_duplicate=True),
                  Input(ids.DATASETS_CANCEL, "n_clicks"), State(ids.DATASETS_JOB, "data"),
                  prevent_initial_call=True)
    def cancel(_n, name):
        return html.Span(builder.cancel(name), className="text-warning-emphasis")
