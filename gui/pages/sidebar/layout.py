"""The config sidebar: tier, components, load/save/reset, presets, training control, derived
quantities and the section accordion, generated from the schema: each field gets its widget
(FieldInfo.widget), id (FieldInfo.component_id) and a message line (ids.field_msg_id).
"""
from __future__ import annotations

import dash_bootstrap_components as dbc
from dash import dcc, html

from umoec import config as C
from umoec.config.fields import FieldInfo, fmt_num

from ... import form
from ... import ids as common
from ...services.launcher import DEFAULT_RATE, RUNNERS
from . import ids

DEBOUNCE_MS = 300
LR_PREVIEW_HEIGHT = 190


# how to type a value, by field kind (or widget)
EXAMPLES = {"int_list": "comma-separated, e.g. 4,7", "float_pair": "two numbers, e.g. 0.9,0.95",
            "display": "letters S D s d, repeated to n_blocks"}


def _hint(info: FieldInfo) -> str:
    ranges = info.range_text() if info.widget != "dropdown" else ""
    example = EXAMPLES.get(info.kind) or EXAMPLES.get(info.widget)
    return " · ".join(p for p in (ranges, info.spec.unit, example) if p)


def widget(info: FieldInfo, value) -> object:
    """The input component of one field, by its schema widget kind."""
    cid, w = info.component_id, info.widget
    if w == "switch":
        return dbc.Switch(id=cid, value=bool(value), label=info.name, class_name="mb-0")
    if w == "slider":
        lo, hi = info.spec.lo or 0.0, info.spec.hi or 1.0
        return dcc.Slider(id=cid, min=lo, max=hi, step=info.spec.step, value=value,
                          marks={lo: fmt_num(lo), hi: fmt_num(hi)}, updatemode="mouseup",
                          tooltip={"placement": "bottom", "always_visible": False})
    if w == "dropdown":
        return dbc.Select(id=cid, value=value, size="sm",
                          options=[{"label": str(c), "value": str(c)} for c in info.spec.choices])
    if w == "number":
        return dbc.Input(id=cid, type="number", value=value, step="any", size="sm",
                         debounce=DEBOUNCE_MS, inputmode="decimal")
    return dbc.Input(id=cid, type="text", value=value, size="sm", debounce=DEBOUNCE_MS,
                     class_name="font-monospace" if w in ("display", "list") else None)


def _label(text: str, target: str) -> dbc.Label:
    return dbc.Label(text, html_for=target, class_name="small mb-0 fw-semibold")


def field_row(info: FieldInfo, value) -> html.Div:
    return html.Div([
        *([] if info.widget == "switch" else [_label(info.name, info.component_id)]),
        widget(info, value),
        html.Div(_hint(info), className="form-text mt-0"),
        html.Div(id=ids.field_msg_id(info.component_id), className="small"),
    ], className="mb-2", title=info.spec.description)


def accordion(values: dict) -> dbc.Accordion:
    items = [dbc.AccordionItem([field_row(f, values[f.key]) for f in form.FIELDS if f.section == section],
                               title=C.SECTION_TITLES[section], item_id=section,
                               id=ids.section_item_id(section))
             for section in C.section_names()]
    return dbc.Accordion(items, id=ids.CONFIG_ACCORDION, always_open=True, start_collapsed=True,
                         flush=True, persistence=True, persistence_type="local")


def _file_controls() -> html.Div:
    rows = [dbc.InputGroup([
        dbc.Input(id=path_id, placeholder=placeholder, size="sm", persistence=True, persistence_type="local"),
        dbc.Button(label, id=btn_id, color="secondary", size="sm", outline=True),
    ], size="sm", class_name="mb-1") for path_id, placeholder, label, btn_id in (
        (ids.CONFIG_LOAD_PATH, "path/to/config.yaml", "Load Config", ids.CONFIG_LOAD_BTN),
        (ids.CONFIG_SAVE_PATH, "path/to/new.yaml", "Save Config", ids.CONFIG_SAVE_BTN))]
    return html.Div([
        *rows,
        dcc.Store(id=ids.CONFIG_SAVE_PENDING),
        dbc.Button("Reset to Default", id=ids.CONFIG_RESET_BTN, color="link", size="sm", class_name="px-0"),
        html.Div(id=ids.CONFIG_FILE_STATUS, className="small", role="status"),
    ], className="mb-2")


def _presets() -> html.Div:
    """Save / delete a named preset (listed in the tier dropdown), import / export the form."""
    return html.Div([
        dbc.InputGroup([
            dbc.Input(id=ids.PRESET_NAME, placeholder="preset name", size="sm"),
            dbc.Button("Save preset", id=ids.PRESET_SAVE_BTN, color="secondary", size="sm", outline=True),
            dbc.Button("Delete", id=ids.PRESET_DELETE_BTN, color="secondary", size="sm",
                       outline=True, title="delete the saved preset of this name"),
        ], size="sm", class_name="mb-1"),
        html.Div([
            dcc.Upload(dbc.Button("Import YAML/JSON", color="link", size="sm", class_name="px-0"),
                       id=ids.CONFIG_IMPORT, accept=".yaml,.yml,.json", max_size=1 << 20,
                       multiple=False, className="me-3"),
            dbc.Button("Export YAML", id=ids.CONFIG_EXPORT_YAML, color="link", size="sm",
                       class_name="px-0 me-3"),
            dbc.Button("Export JSON", id=ids.CONFIG_EXPORT_JSON, color="link", size="sm", class_name="px-0"),
            dcc.Download(id=ids.CONFIG_EXPORT),
        ], className="d-flex align-items-center"),
        html.Div(id=ids.PRESET_STATUS, className="small", role="status"),
    ], className="mb-2")


def _control() -> dbc.Card:
    return dbc.Card(dbc.CardBody([
        dbc.RadioItems(id=ids.CONFIG_RUNNER, value="simulate", inline=True, class_name="small",
                       options=[{"label": RUNNERS["train"], "value": "train", "disabled": True},
                                {"label": RUNNERS["simulate"], "value": "simulate"}]),
        html.Div(id=ids.CONFIG_RUNNER_NOTE, className="form-text mt-0 mb-1"),
        dbc.InputGroup([
            dbc.Input(id=ids.CONFIG_RUN_NAME, placeholder="run name (optional)", size="sm"),
            dbc.Input(id=ids.CONFIG_SIM_RATE, type="number", value=DEFAULT_RATE, min=0.1,
                      step="any", size="sm", style={"maxWidth": "5.5rem"}),
            dbc.InputGroupText("sim steps/s", class_name="small"),
        ], size="sm", class_name="mb-2"),
        html.Div([
            dbc.Button("Start", id=ids.CONFIG_START, color="success", size="sm", class_name="me-2"),
            dbc.Button("Stop", id=ids.CONFIG_STOP, color="danger", size="sm", outline=True, disabled=True),
            dcc.ConfirmDialog(id=ids.CONFIG_STOP_CONFIRM, message=""),
        ], className="mb-2"),
        html.Div(id=ids.CONFIG_STATUS, className="small", role="status"),
        html.Div(id=ids.CONFIG_VALIDATION, className="small mt-1"),
    ]), class_name="mb-2")


def _derived() -> dbc.Card:
    return dbc.Card([
        dbc.CardHeader("Derived quantities", class_name="py-1 small fw-semibold"),
        dbc.CardBody([
            html.Div(id=ids.CONFIG_DERIVED, className="small"),
            dcc.Graph(id=ids.CONFIG_LR_PREVIEW, config={"displayModeBar": False},
                      style={"height": f"{LR_PREVIEW_HEIGHT}px"}),
        ], class_name="p-2"),
    ], class_name="mb-2")


def layout() -> html.Div:
    values = form.default_values()
    return html.Div([
        dcc.Store(id=ids.CONFIG_FORM_STORE, storage_type="local"),
        dcc.Store(id=common.CONFIG_INJECT, storage_type="memory"),
        dcc.Store(id=ids.CONFIG_CONTROL_MSG, storage_type="memory"),
        html.Div([
            _label("Tier", common.CONFIG_TIER),
            dbc.Select(id=common.CONFIG_TIER, value=form.TIER_INFO.default, size="sm",
                       options=[{"label": p, "value": p} for p in C.preset_names()]),
        ], className="mb-2"),
        html.Div([
            _label("Components", ids.CONFIG_COMPONENTS),
            dbc.Checklist(id=ids.CONFIG_COMPONENTS, value=form.checklist_value(values),
                          options=[{"label": label, "value": key} for key, label in form.COMPONENTS.items()],
                          inline=True, class_name="small"),
        ], className="mb-2"),
        _file_controls(),
        _presets(),
        _control(),
        _derived(),
        accordion(values),
    ], className="config-panel")
