"""Runs tab: the run list; rename, delete (after a dialog) and notes of the run chosen in the top
bar; opening a Forge run folder. File work: services/run_admin.py and services/forge.py."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from dash import Input, Output, State, ctx, html, no_update
from dash.exceptions import PreventUpdate

from umoec.run.forge import ForgeFormatError

from ... import ids as common
from ...components.visible import visible_only
from ...context import AppContext
from ...services import forge, run_admin
from ...services.runs import run_options
from ..base import bad, ok
from . import ids

MANAGE_OUTPUTS = ("message", "modal_open", "modal_body", "target", "options", "value", "table")


def table_rows(runs_dir: Path) -> list[dict[str, Any]]:
    return [{**r, "id": r["key"]} for r in run_admin.run_rows(runs_dir)]


def selected_view(runs_dir: Path, name: str | None) -> dict[str, Any]:
    """The management card for the run chosen in the top bar."""
    if not name:
        return dict(title="none (choose one in the top bar or click a row)", notes="",
                    disabled=True, placeholder="")
    if (fr := forge.resolve_any(runs_dir, name)[1]) is not None:
        return dict(title=fr.label, notes="", disabled=True,
                    placeholder="Forge runs are read-only: no rename, delete or notes")
    try:
        notes = run_admin.read_notes(runs_dir, name)
    except run_admin.RunAdminError as exc:
        return dict(title=str(name), notes="", disabled=True, placeholder=str(exc))
    return dict(title=name, notes=notes, disabled=False, placeholder="what this run tries...")


def manage_action(trigger: str | None, runs_dir: Path, launcher: Any, selected: str | None,
                  new_name: str | None, notes: str | None, target: str | None) -> dict[str, Any]:
    """Rename / ask to delete / confirm delete / cancel / save notes."""
    out: dict[str, Any] = {k: no_update for k in MANAGE_OUTPUTS}
    try:
        if trigger == ids.RUNS_RENAME_BTN:
            new = run_admin.rename_run(runs_dir, selected, new_name, launcher)
            out.update(message=ok(f"Renamed {selected} to {new}."), options=run_options(runs_dir),
                       value=new, table=table_rows(runs_dir))
        elif trigger == ids.RUNS_DELETE_BTN:
            run = run_admin._own_run(runs_dir, selected)
            if reason := run_admin.busy_reason(run, launcher):
                raise run_admin.RunAdminError(f"not deleted: {reason}")
            files, size = run_admin.folder_size(run.root)
            out.update(modal_open=True, target=run.name, message=None, modal_body=[
                html.P(["Delete run ", html.Strong(run.name), f" and its whole folder ({files} "
                        f"files, {size / 1e6:.1f} MB)?"]),
                html.P(str(run.root), className="font-monospace small text-muted"),
                html.P("This cannot be undone.", className="text-danger mb-0")])
        elif trigger == ids.RUNS_DELETE_CONFIRM:
            out["modal_open"], out["target"] = False, None
            text = run_admin.delete_run(runs_dir, target, launcher)
            options = run_options(runs_dir)
            out.update(message=ok(text), options=options, table=table_rows(runs_dir),
                       value=options[0]["value"] if options else None)
        elif trigger == ids.RUNS_DELETE_CANCEL:
            out.update(modal_open=False, target=None, message="Nothing deleted.")
        elif trigger == ids.RUNS_NOTES_SAVE:
            out.update(message=ok(run_admin.write_notes(runs_dir, selected, notes)),
                       table=table_rows(runs_dir))
    except run_admin.RunAdminError as exc:
        out["message"] = bad(str(exc))
    return out


def register(app, cockpit: AppContext) -> None:
    runs_dir = cockpit.settings.runs_dir
    launcher = cockpit.launcher

    @app.callback(Output(ids.RUNS_TABLE, "data"), Input(common.tab_tick(common.TAB_RUNS), "data"),
                  Input(common.TABS, "active_tab"), State(ids.RUNS_TABLE, "data"))
    @visible_only(common.TAB_RUNS)
    def refresh_table(_n, _tab, current):
        rows = table_rows(runs_dir)
        if rows == current:
            raise PreventUpdate
        return rows

    @app.callback(Output(common.RUN_SELECT, "value", allow_duplicate=True),
                  Input(ids.RUNS_TABLE, "active_cell"), prevent_initial_call=True)
    def pick_row(cell):
        if not isinstance(cell, dict) or not cell.get("row_id"):
            raise PreventUpdate
        return cell["row_id"]

    @app.callback(output=dict(title=Output(ids.RUNS_SELECTED, "children"),
                              notes=Output(ids.RUNS_NOTES, "value"),
                              notes_disabled=Output(ids.RUNS_NOTES, "disabled"),
                              placeholder=Output(ids.RUNS_NOTES, "placeholder"),
                              rename_disabled=Output(ids.RUNS_RENAME_BTN, "disabled"),
                              delete_disabled=Output(ids.RUNS_DELETE_BTN, "disabled"),
                              save_disabled=Output(ids.RUNS_NOTES_SAVE, "disabled"),
                              new_name=Output(ids.RUNS_RENAME_INPUT, "value")),
                  inputs=[Input(common.RUN_SELECT, "value"), Input(common.TABS, "active_tab")],
                  state=[State(ids.RUNS_SELECTED, "children")])
    @visible_only(common.TAB_RUNS)
    def show_selected(name, _tab, shown):
        v = selected_view(runs_dir, name)
        d = v["disabled"]
        keep = v["title"] == shown            # the same run again: keep what is being typed
        return dict(title=no_update if keep else v["title"], notes=no_update if keep else v["notes"],
                    new_name=no_update if keep else "", placeholder=v["placeholder"],
                    notes_disabled=d, rename_disabled=d, delete_disabled=d, save_disabled=d)

    @app.callback(output=dict(message=Output(ids.RUNS_MESSAGE, "children"),
                              modal_open=Output(ids.RUNS_DELETE_MODAL, "is_open"),
                              modal_body=Output(ids.RUNS_DELETE_BODY, "children"),
                              target=Output(ids.RUNS_DELETE_TARGET, "data"),
                              options=Output(common.RUN_SELECT, "options", allow_duplicate=True),
                              value=Output(common.RUN_SELECT, "value", allow_duplicate=True),
                              table=Output(ids.RUNS_TABLE, "data", allow_duplicate=True)),
                  inputs=[Input(i, "n_clicks") for i in (ids.RUNS_RENAME_BTN, ids.RUNS_DELETE_BTN,
                                                         ids.RUNS_DELETE_CONFIRM, ids.RUNS_DELETE_CANCEL,
                                                         ids.RUNS_NOTES_SAVE)],
                  state=[State(common.RUN_SELECT, "value"), State(ids.RUNS_RENAME_INPUT, "value"),
                         State(ids.RUNS_NOTES, "value"), State(ids.RUNS_DELETE_TARGET, "data")],
                  prevent_initial_call=True)
    def manage(_rename, _delete, _confirm, _cancel, _notes, selected, new_name, notes, target):
        return manage_action(ctx.triggered_id, runs_dir, launcher, selected, new_name, notes, target)

    @app.callback(Output(ids.FORGE_MESSAGE, "children"),
                  Output(common.RUN_SELECT, "options", allow_duplicate=True),
                  Output(common.RUN_SELECT, "value", allow_duplicate=True),
                  Input(ids.FORGE_OPEN_BTN, "n_clicks"), State(ids.FORGE_PATH, "value"),
                  prevent_initial_call=True)
    def open_forge(_n, path_text):
        try:
            run = forge.open_path(path_text, forge.registry())
        except ForgeFormatError as exc:
            return bad(f"Not opened: {exc}"), no_update, no_update
        return (ok(f"Opened {run.label}: it is selected in the top bar and listed in Compare."),
                run_options(runs_dir), run.key)
