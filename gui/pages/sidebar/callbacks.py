"""Config sidebar and training control. Callback bodies are module functions (tests call them):
`fill_form` (page load, tier, Load, Reset, checklist <-> switches, CONFIG_INJECT), `check_form`
(validation, derived quantities, LR preview, the form saved to localStorage), `save_config`,
`control` (Start / Stop / Resume: services/launcher.py) and `show_status`.
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import dash_bootstrap_components as dbc
from dash import Input, Output, State, ctx, html, no_update, set_props

from umoec import config as C
from umoec.metrics import read
from umoec.run import RunDir, RunState
from umoec.schedule import lr_curve

from ... import form
from ... import ids as common
from ...context import AppContext
from ...figures.base import empty_fig
from ...figures.training import lr_preview_fig
from ...services import presets as user_presets
from ...services.forge import resolve_forge
from ...services.launcher import RUNNERS, Launcher, LaunchError, last_output_line, trainer_available
from ...services.runs import ACTIVE, BADGE_COLOURS, resolve, run_list, summarise
from ...view import derived
from ...view.training import step_rate
from ..base import bad, ok
from . import ids
from .layout import LR_PREVIEW_HEIGHT

SWITCH_KEYS = list(form.COMPONENTS)
INVALIDABLE = [f for f in form.FIELDS if f.widget not in ("switch", "slider")]
SECTIONS = C.section_names()


def save_action(values: dict, tier, path_text, pending) -> tuple:
    """Save Config: (status, pending path); overwrites only on a second click on the same path."""
    try:
        path = form.resolve_path(path_text)
        done = form.save_file(values, tier, path, overwrite=pending == str(path))
    except form.NeedsConfirmation as exc:
        return html.Span(str(exc), className="text-warning"), str(path)
    except form.FormFileError as exc:
        return bad(str(exc)), None
    return ok(f"Saved {done}."), None


# -- filling the form -------------------------------------------------------------------------
def fill(trigger: str | None, tier: str | None, checklist: list | None,
         switches: dict[str, Any], inject: Any, load_path: str | None, stored: Any,
         base: Path | None = None) -> dict[str, Any]:
    """What `fill_form` writes: {"values" (changed keys), "tier", "checklist", "message"}, if any."""
    out: dict[str, Any] = {}
    values: dict | None = None
    if trigger is None:  # page load: the saved form where it differs from the layout's defaults
        # (re-sending every value costs a second render); the tier is always sent: check_form runs
        values = {}
        out["tier"] = tier or form.TIER_INFO.default
        if isinstance(stored, dict) and isinstance(stored.get("values"), dict):
            defaults = form.default_values()
            values = {k: v for k, v in stored["values"].items() if k in form.BY_KEY and v != defaults[k]}
            if isinstance(stored.get("tier"), str) and stored["tier"]:
                out["tier"] = stored["tier"]
    elif trigger == common.CONFIG_TIER:
        try:
            values = form.preset_values(tier)
            out["message"] = ok(f"Loaded the {tier} preset.")
        except C.ConfigError as exc:
            out["message"] = bad(str(exc))
    elif trigger == ids.CONFIG_RESET_BTN:
        if tier in C.preset_names() or user_presets.is_user_preset(tier):
            values = form.preset_values(tier)
            out["message"] = ok(f"Reset to the {tier} defaults.")
        else:
            values = form.default_values()
            out["tier"] = form.TIER_INFO.default
            out["message"] = ok(f"{tier!r} is not a preset: reset to the schema defaults "
                                f"({form.TIER_INFO.default}).")
    elif trigger == ids.CONFIG_LOAD_BTN:
        try:
            path = form.resolve_path(load_path, base)
            loaded = form.load_file(path)
        except form.FormFileError as exc:
            out["message"] = bad(f"Not loaded: {exc}")
        else:
            values, out["tier"] = loaded.values, loaded.tier
            out["message"] = ok(f"Loaded {path}{loaded.note}.")
    elif trigger == ids.CONFIG_COMPONENTS:
        chosen = set(checklist or [])
        out["values"] = {k: k in chosen for k in SWITCH_KEYS if switches.get(k) != (k in chosen)}
        return out
    elif trigger in {form.BY_KEY[k].component_id for k in SWITCH_KEYS}:
        out["checklist"] = form.checklist_value(switches)
        return out
    elif trigger == common.CONFIG_INJECT:
        pushed = inject.get("values") if isinstance(inject, dict) else None
        if isinstance(pushed, dict):
            values = {k: form.to_form(form.BY_KEY[k], v) if isinstance(v, (list, tuple)) else v
                      for k, v in pushed.items() if k in form.BY_KEY}
            source = inject.get("source") or "another tab"
            out["message"] = ok(f"Applied {len(values)} value(s) from {source}.")
            if isinstance(inject.get("tier"), str) and inject["tier"]:  # an imported config's tier
                out["tier"] = inject["tier"]
    if values is not None:
        out["values"] = values
        out["checklist"] = form.checklist_value({**switches, **values})
    return out


# -- checking the form ------------------------------------------------------------------------
def derived_table(cfg: C.Config) -> html.Table:
    rows = [html.Tr([html.Td(q.label, className="text-muted text-nowrap"),
                     html.Td(html.Strong(q.value)), html.Td(q.note, className="text-muted")])
            for q in derived.quantities(cfg)]
    return html.Table(html.Tbody(rows), className="derived-table w-100")


def lr_preview(cfg: C.Config | None):
    if cfg is None:
        return empty_fig("Fix the highlighted fields to preview the schedule", height=LR_PREVIEW_HEIGHT)
    t = cfg.training
    steps, adamw = lr_curve(t.steps, t.warmup_steps, t.cosine_schedule, cfg.optimizer.adamw.lr)
    _, muon = lr_curve(t.steps, t.warmup_steps, t.cosine_schedule, cfg.optimizer.muon.lr)
    return lr_preview_fig(steps, adamw, muon, t.warmup_steps, height=LR_PREVIEW_HEIGHT)


def summary(result: form.FormCheck) -> object:
    if result.errors:
        n = len(result.errors)
        items = [html.Li(m) for m in list(result.errors.values())[:6]]
        return dbc.Alert([html.Strong(f"{n} error{'s' if n > 1 else ''}: Start is disabled until "
                                      "fixed."), html.Ul(items, className="mb-0 ps-3")],
                         color="danger", class_name="py-1 px-2 mb-0 small")
    lines = [html.Div("Config valid.", className="text-muted")]
    lines += [html.Div(f"Warning: {m}", className="text-warning-emphasis") for m in result.warnings.values()]
    lines += [html.Div(f"The trainer will refuse it: {m}. Start with the trainer is refused; the "
                       "simulator runs it.", className="text-danger") for m in result.refusals.values()]
    return html.Div(lines) if len(lines) > 1 else lines[0]


def derived_view(values: dict[str, Any], tier: Any, result: form.FormCheck) -> object:
    """The derived quantities; with fields in error, from the preset's values for them (said so)."""
    if result.ok:
        return derived_table(result.config)
    try:
        base = form.preset_values(str(tier))
    except Exception:  # an unknown or broken preset: the schema's defaults
        base = form.default_values()
    patched = form.check({**values, **{k: base[k] for k in result.errors if k in base}}, tier)
    if not patched.ok:
        return html.Span("Derived quantities appear when the form is valid.", className="text-muted")
    keys = ", ".join(sorted(result.errors))
    return html.Div([html.Div(f"With the preset's values for {keys} (in error above):",
                              className="text-warning-emphasis small"),
                     derived_table(patched.config)])


def check(values: dict[str, Any], tier: Any) -> dict[str, Any]:
    """What `check_form` writes, from the form's current values."""
    result = form.check(values, tier)
    warned = {k: html.Span(m, className="text-warning-emphasis") for k, m in result.warnings.items()}
    messages = {f.key: bad(result.errors[f.key]) if f.key in result.errors else warned.get(f.key)
                for f in form.FIELDS}
    titles = {}
    for section in SECTIONS:
        n = sum(1 for k in result.errors if k.rsplit(".", 1)[0] == section)
        title = C.SECTION_TITLES[section]
        titles[section] = (html.Span([title, html.Span(f" · {n} error{'s' if n > 1 else ''}",
                                                       className="section-errors")])
                           if n else title)
    return {"invalid": {f.key: f.key in result.errors for f in INVALIDABLE},
            "messages": messages, "titles": titles, "start_disabled": not result.ok,
            "summary": summary(result),
            "derived": derived_view(values, tier, result),
            "lr": lr_preview(result.config),
            "store": {"values": values, "tier": tier, "saved_at": time.time()}}


def mark_fields(out: dict[str, Any]) -> None:
    """Field outlines, message lines and section error counts as side updates (set_props): as ~140
    declared outputs they were most of a page load (Dash's renderer is quadratic in them)."""
    for f in INVALIDABLE:
        set_props(f.component_id, {"invalid": out["invalid"][f.key]})
    for f in form.FIELDS:
        set_props(ids.field_msg_id(f.component_id), {"children": out["messages"][f.key]})
    for section in SECTIONS:
        set_props(ids.section_item_id(section), {"title": out["titles"][section]})


# -- status -----------------------------------------------------------------------------------
def status_view(runs_dir: Path, launcher: Launcher, name: str | None,
                control: Any, offered: list | None = None) -> dict[str, Any]:
    """config-status for the selected run, and whether Stop / Resume make sense now: Resume
    waits until the checkpoint picker (`offered`, its options; None: not checked) lists the
    run's newest checkpoint, so a click right after Stop cannot take an older one."""
    lines: list = []
    stop_ok = resume_ok = False
    run = resolve(runs_dir, name)
    launched = launcher.get(name)
    if run is None and launched is not None:
        stop_ok = launched.alive
        if launched.alive:
            lines += [dbc.Badge("Starting", color="info", class_name="me-2"),
                      html.Span(f"{name}: process {launched.pid} launched, waiting for its first status")]
        else:
            lines += [dbc.Badge(f"Crashed (exit code {launched.exit_code})", color="danger",
                                class_name="me-2"),
                      html.Span(last_output_line(RunDir(launched.run_dir).process_log_path))]
    elif run is None:   # nothing selected, or a Forge folder (read-only)
        text = ("No run selected. Press Start to launch one from this config."
                if resolve_forge(runs_dir, name) is None else
                f"{name} is a Forge run, opened read-only: start, stop and resume it with forge itself.")
        lines.append(html.Span(text, className="text-muted"))
    else:
        s = summarise(run, launched=launched)
        label = s.label
        if s.state is RunState.RUNNING and not s.resuming:
            step, rate = _progress(run)
            label = f"Running (step {max(s.step, step or 0):,}/{s.total_steps:,}" + (
                f", {rate:.1f} steps/s)" if rate else ")")
            if s.detail.startswith("slow step"):  # alive and working on a long step
                label += f" - {s.detail}"
        lines += [dbc.Badge(label, color=BADGE_COLOURS[s.state], class_name="me-2 text-wrap",
                            id="config-status-badge"),
                  html.Span(run.name + (" (simulated)" if s.simulated else ""),
                            className="text-muted")]
        stop_ok = s.state in ACTIVE
        cks = run.checkpoints()
        resume_ok = not stop_ok and bool(cks) and not (launched and launched.alive)
        if resume_ok and offered is not None:
            resume_ok = cks[-1].path.name in {o.get("value") for o in offered if isinstance(o, dict)}
    if note := launcher.note(name):
        lines.append(html.Div(note, className="text-muted"))
    done_stopping = (isinstance(control, dict) and control.get("action") == "stop"
                     and run is not None and control.get("run") == run.name and not stop_ok)
    if isinstance(control, dict) and control.get("text") and not done_stopping:
        # (a "SIGTERM sent ... waiting" note ends when the run has stopped: its badge says so)
        cls = "text-success" if control.get("ok") else "text-danger"
        lines.append(html.Div(control["text"], className=cls))
    return {"status": html.Div(lines), "stop_disabled": not stop_ok, "resume_disabled": not resume_ok}


def _progress(run) -> tuple[int | None, float | None]:
    """(newest logged step, steps per second) from the metrics (fresher than the heartbeat)."""
    try:
        with read.open_db(run.db_path) as conn:
            recent = read.recent_train_metrics(conn, 20)
    except Exception:  # progress is a nicety; the status must show regardless
        return None, None
    if recent.empty:
        return None, None
    return int(recent["step"].iloc[-1]), step_rate(recent)


def control_action(trigger: str, launcher: Launcher, runs_dir: Path, values: dict, tier: Any,
                   runner: str | None, run_name: str | None, rate: Any,
                   selected: str | None, checkpoint: str | None) -> dict[str, Any]:
    """Start, Stop or Resume; returns {"ok", "text", "run"} (run: the run to select)."""
    def refused(text: str) -> dict[str, Any]:
        return {"ok": False, "text": text, "run": None}

    try:
        rate_f = float(rate) if rate not in (None, "") else 20.0
    except (TypeError, ValueError):
        rate_f = -1.0
    try:
        if trigger == ids.CONFIG_START:
            result = form.check(values, tier)
            if not result.ok:
                return refused("Not started: the config has errors (see the highlighted fields).")
            launched = launcher.start(result.config, runner or "simulate", run_name, rate_f)
            return {"ok": True, "run": launched.name,
                    "text": f"Started {launched.name} ({RUNNERS[launched.runner]}, pid "
                            f"{launched.pid}); output in {RunDir(launched.run_dir).process_log_path}"}
        run = resolve(runs_dir, selected)
        starting = launcher.get(selected)
        if run is None and starting is not None and starting.alive:  # no status.json yet
            run = RunDir(starting.run_dir)
        if run is None:
            return refused("No run selected.")
        if trigger == ids.CONFIG_STOP:
            return {"ok": True, "text": launcher.stop(run), "run": run.name, "action": "stop"}
        if trigger == common.RESUME_BTN:
            launched = launcher.resume(run, checkpoint, rate_f)
            return {"ok": True, "run": run.name,
                    "text": f"Resuming {run.name} from {checkpoint} (pid {launched.pid})"}
    except LaunchError as exc:
        return refused(str(exc))
    except OSError as exc:
        return refused(f"Failed: {exc.strerror or exc}")
    return refused(f"unknown action {trigger}")


# -- wiring -----------------------------------------------------------------------------------
# Stop asks first (the browser's confirm dialog, no round trip): a stray click must not end a long run.
STOP_CONFIRM_JS = """function(n, run) {
    if (!n) { return [false, window.dash_clientside.no_update]; }
    return [true, "Stop run " + (run || "?") + "? It finishes its current step, saves a checkpoint " +
                  "and exits; Resume continues from there."];
}"""


def register(app, cockpit: AppContext) -> None:
    runs_dir = cockpit.settings.runs_dir
    launcher = cockpit.launcher
    switch_ids = [form.BY_KEY[k].component_id for k in SWITCH_KEYS]

    @app.callback(*[Output(i, "value") for i in form.FIELD_IDS],
                  Output(common.CONFIG_TIER, "value"), Output(common.CONFIG_TIER, "options"),
                  Output(ids.CONFIG_COMPONENTS, "value"), Output(ids.CONFIG_FILE_STATUS, "children"),
                  Input(common.CONFIG_TIER, "value"), Input(ids.CONFIG_LOAD_BTN, "n_clicks"),
                  Input(ids.CONFIG_RESET_BTN, "n_clicks"), Input(ids.CONFIG_COMPONENTS, "value"),
                  *[Input(i, "value") for i in switch_ids], Input(common.CONFIG_INJECT, "data"),
                  State(ids.CONFIG_LOAD_PATH, "value"), State(ids.CONFIG_FORM_STORE, "data"))
    def fill_form(tier, _load, _reset, checklist, *rest):
        switches = dict(zip(SWITCH_KEYS, rest[:len(SWITCH_KEYS)], strict=True))
        inject, load_path, stored = rest[len(SWITCH_KEYS):]
        out = fill(ctx.triggered_id, tier, checklist, switches, inject, load_path, stored)
        values = out.get("values", {})
        new_tier = out.get("tier", no_update)
        return (*[values.get(f.key, no_update) for f in form.FIELDS], new_tier,
                user_presets.tier_options(new_tier if new_tier is not no_update else tier),
                out.get("checklist", no_update), out.get("message", no_update))

    @app.callback(Output(ids.CONFIG_START, "disabled"), Output(ids.CONFIG_VALIDATION, "children"),
                  Output(ids.CONFIG_DERIVED, "children"), Output(ids.CONFIG_LR_PREVIEW, "figure"),
                  Output(ids.CONFIG_FORM_STORE, "data"),
                  *[Input(i, "value") for i in form.FIELD_IDS], Input(common.CONFIG_TIER, "value"))
    def check_form(*args):
        values, tier = form.values_of(list(args[:-1])), args[-1]
        out = check(values, tier)
        mark_fields(out)
        return out["start_disabled"], out["summary"], out["derived"], out["lr"], out["store"]

    @app.callback(Output(ids.CONFIG_FILE_STATUS, "children", allow_duplicate=True),
                  Output(ids.CONFIG_SAVE_PENDING, "data"),
                  Input(ids.CONFIG_SAVE_BTN, "n_clicks"), State(ids.CONFIG_SAVE_PATH, "value"),
                  State(ids.CONFIG_SAVE_PENDING, "data"),
                  *[State(i, "value") for i in form.FIELD_IDS], State(common.CONFIG_TIER, "value"),
                  prevent_initial_call=True)
    def save_config(_n, path_text, pending, *args):
        values, tier = form.values_of(list(args[:-1])), args[-1]
        return save_action(values, tier, path_text, pending)

    @app.callback(Output(ids.CONFIG_CONTROL_MSG, "data"),
                  Output(common.RUN_SELECT, "options", allow_duplicate=True),
                  Output(common.RUN_SELECT, "value", allow_duplicate=True),
                  Input(ids.CONFIG_START, "n_clicks"),
                  Input(ids.CONFIG_STOP_CONFIRM, "submit_n_clicks"),
                  Input(common.RESUME_BTN, "n_clicks"),
                  State(ids.CONFIG_RUNNER, "value"), State(ids.CONFIG_RUN_NAME, "value"),
                  State(ids.CONFIG_SIM_RATE, "value"), State(common.RUN_SELECT, "value"),
                  State(common.RESUME_CHECKPOINT, "value"),
                  *[State(i, "value") for i in form.FIELD_IDS], State(common.CONFIG_TIER, "value"),
                  prevent_initial_call=True)
    def control(_start, _stop, _resume, runner, run_name, rate, selected, checkpoint, *args):
        values, tier = form.values_of(list(args[:-1])), args[-1]
        # Stop acts only once its confirmation dialog is accepted
        trigger = ids.CONFIG_STOP if ctx.triggered_id == ids.CONFIG_STOP_CONFIRM else ctx.triggered_id
        msg = control_action(trigger, launcher, runs_dir, values, tier, runner,
                             run_name, rate, selected, checkpoint)
        msg["ts"] = time.time()
        if msg.get("run") and msg["run"] != selected:
            return msg, run_list(runs_dir, launcher), msg["run"]
        return msg, no_update, no_update

    app.clientside_callback(STOP_CONFIRM_JS, Output(ids.CONFIG_STOP_CONFIRM, "displayed"),
                            Output(ids.CONFIG_STOP_CONFIRM, "message"),
                            Input(ids.CONFIG_STOP, "n_clicks"), State(common.RUN_SELECT, "value"),
                            prevent_initial_call=True)

    @app.callback(Output(ids.CONFIG_STATUS, "children"), Output(ids.CONFIG_STOP, "disabled"),
                  Output(common.RESUME_BTN, "disabled"), Output(ids.CONFIG_RUNNER, "options"),
                  Output(ids.CONFIG_RUNNER, "value"), Output(ids.CONFIG_RUNNER_NOTE, "children"),
                  Input(common.HEADER_TICK, "data"), Input(common.RUN_SELECT, "value"),
                  Input(ids.CONFIG_CONTROL_MSG, "data"),
                  # a State: as an Input, the Training tab's refresh would gate (and drop) this call
                  State(common.RESUME_CHECKPOINT, "options"),
                  State(ids.CONFIG_RUNNER, "options"), State(ids.CONFIG_RUNNER, "value"))
    def show_status(_n, name, control_msg, offered, runner_options, runner):
        view = status_view(runs_dir, launcher, name, control_msg, offered or [])
        train_ok, why = trainer_available(launcher.root)
        options = launcher.runner_options()
        changed = options != runner_options   # availability changed (or first tick): prefer the trainer
        value = ("train" if train_ok else "simulate") if changed else no_update
        if runner == "train" and not train_ok:
            value = "simulate"
        note = "" if train_ok else f"{RUNNERS['train']} is unavailable: {why}"
        return (view["status"], view["stop_disabled"], view["resume_disabled"],
                options if changed else no_update, value, note)
