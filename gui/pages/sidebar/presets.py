"""Presets and config import/export in the config sidebar (file work: services/presets.py).

Save preset selects the new preset in the tier dropdown (fill_form then loads it like a tier);
Delete removes the saved preset named in the box; Import fills the form through `config-inject`
(invalid values marked, as with Load Config); Export downloads the valid form as YAML or JSON.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from dash import Input, Output, State, ctx, dcc, no_update
from dash.exceptions import PreventUpdate

from ... import form
from ... import ids as common
from ...context import AppContext
from ...services import presets
from ..base import bad, ok
from . import ids


def preset_action(trigger: str | None, folder: Path | None, name: str | None,
                  values: dict[str, Any], tier: Any) -> dict[str, Any]:
    """{"message", "options", "tier"} for Save preset / Delete."""
    out: dict[str, Any] = {"message": no_update, "options": no_update, "tier": no_update}
    try:
        if trigger == ids.PRESET_SAVE_BTN:
            clean, existed = presets.save(values, name, folder)
            out.update(message=ok(f"{'Updated' if existed else 'Saved'} preset {clean} "
                                  f"({folder / (clean + '.yaml')})."),
                       options=presets.tier_options(clean), tier=clean)
        elif trigger == ids.PRESET_DELETE_BTN:
            if not presets.sanitise(name):
                raise presets.PresetError("type the name of the saved preset to delete")
            gone = presets.delete(presets.sanitise(name), folder)
            out.update(message=ok(f"Deleted preset {gone}."),
                       options=presets.tier_options(tier if tier != gone else None))
    except presets.PresetError as exc:
        out["message"] = bad(str(exc))
    return out


def import_action(contents: str | None, filename: str | None) -> dict[str, Any]:
    """{"inject", "message"}: the uploaded config as form values for config-inject."""
    filename = filename or "upload"
    try:
        loaded = presets.import_text(presets.decode_upload(contents, filename), filename)
    except presets.PresetError as exc:
        return {"inject": no_update, "message": bad(f"Not imported: {exc}")}
    return {"inject": {"values": loaded.values, "tier": loaded.tier, "source": f"import of {filename}"},
            "message": ok(f"Imported {filename}{loaded.note}.")}


def register(app, cockpit: AppContext) -> None:
    folder = cockpit.settings.presets_dir

    @app.callback(Output(ids.PRESET_STATUS, "children"),
                  Output(common.CONFIG_TIER, "options", allow_duplicate=True),
                  Output(common.CONFIG_TIER, "value", allow_duplicate=True),
                  Input(ids.PRESET_SAVE_BTN, "n_clicks"), Input(ids.PRESET_DELETE_BTN, "n_clicks"),
                  State(ids.PRESET_NAME, "value"), *[State(i, "value") for i in form.FIELD_IDS],
                  State(common.CONFIG_TIER, "value"), prevent_initial_call=True)
    def save_or_delete(_save, _delete, name, *args):
        values, tier = form.values_of(list(args[:-1])), args[-1]
        out = preset_action(ctx.triggered_id, folder, name, values, tier)
        return out["message"], out["options"], out["tier"]

    @app.callback(Output(common.CONFIG_INJECT, "data", allow_duplicate=True),
                  Output(ids.PRESET_STATUS, "children", allow_duplicate=True),
                  Output(ids.CONFIG_IMPORT, "contents"),
                  Input(ids.CONFIG_IMPORT, "contents"), State(ids.CONFIG_IMPORT, "filename"),
                  prevent_initial_call=True)
    def import_config(contents, filename):
        if not contents:
            raise PreventUpdate
        out = import_action(contents, filename)
        return out["inject"], out["message"], None  # cleared: the same file can be imported again

    @app.callback(Output(ids.CONFIG_EXPORT, "data"),
                  Output(ids.PRESET_STATUS, "children", allow_duplicate=True),
                  Input(ids.CONFIG_EXPORT_YAML, "n_clicks"), Input(ids.CONFIG_EXPORT_JSON, "n_clicks"),
                  *[State(i, "value") for i in form.FIELD_IDS], State(common.CONFIG_TIER, "value"),
                  prevent_initial_call=True)
    def export_config(_yaml, _json, *args):
        values, tier = form.values_of(list(args[:-1])), args[-1]
        fmt = "json" if ctx.triggered_id == ids.CONFIG_EXPORT_JSON else "yaml"
        try:
            name, text = presets.export_text(values, tier, fmt)
        except presets.PresetError as exc:
            return no_update, bad(str(exc))
        return dcc.send_string(text, name), ok(f"Exported {name}.")
