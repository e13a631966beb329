"""Growth tab: `follow_form` sets the knobs' sliders from the config sidebar (or on Reset),
`update` applies them (view/growth.py keeps the config legal) and draws the readouts, cards and
curves, `copy` sends the changes to the sidebar. Bodies are module functions tests call."""
from __future__ import annotations

import time
from typing import Any

import dash_bootstrap_components as dbc
from dash import Input, Output, State, html, no_update

from ... import form
from ... import ids as common
from ...components.visible import visible_only
from ...context import AppContext
from ...figures.base import empty_fig
from ...figures.growth import growth_fig
from ...view import growth
from ..base import ok
from . import ids
from . import layout as panel

KNOBS = growth.KNOBS
SLIDER_IDS = [ids.growth_slider_id(k) for k in KNOBS]
FOLLOW_KEYS = [*KNOBS, "patches.scales"]


def follow(values: dict[str, Any]) -> dict[str, dict | None]:
    """Per knob: {"values": ladder, "index": position of the form's value}, or None where the
    form's field is not an integer (that slider stays as it is)."""
    knobs, scales = growth.knob_values(values), growth.scales_of(values)
    return {k: None if knobs[k] is None else panel.slider_setup(k, knobs[k], scales) for k in KNOBS}


def chosen(slider_values: list, ladders: dict) -> dict[str, int]:
    """The knob values the slider positions stand for."""
    return {key: int(ladders[key][max(0, min(len(ladders[key]) - 1, int(index)))])
            for key, index in zip(KNOBS, slider_values, strict=True)
            if ladders.get(key) and isinstance(index, (int, float))}


def _alert(text, colour: str = "warning") -> dbc.Alert:
    return dbc.Alert(text, color=colour, class_name="py-2 small mb-2")


def growth_view(values: dict[str, Any], tier: Any, choice: dict[str, int]) -> dict[str, Any]:
    """Everything `update` writes; `pending` is what Copy pushes (None when nothing changed)."""
    base_knobs = growth.knob_values(values)
    readouts = {k: panel.readout(choice[k], base_knobs[k]) if k in choice else "" for k in KNOBS}
    out: dict[str, Any] = {"readouts": readouts, "message": None, "cards": [], "notes": None,
                           "copy_disabled": True, "pending": None}
    base = form.check(values, tier)
    if not base.ok:
        first = next(iter(base.errors.values()))
        out["message"] = _alert(f"The sidebar's config has {len(base.errors)} error(s): fix them "
                                f"first (first: {first}).")
        out["figure"] = empty_fig("No curves while the config has errors", height=640)
        return out
    grown = growth.grow(values, tier, choice)
    effective = growth.knob_values(grown.values)
    if "moe.top_k" in choice and effective["moe.top_k"] != choice["moe.top_k"]:
        readouts["moe.top_k"] = panel.readout(effective["moe.top_k"], base_knobs["moe.top_k"],
                                              f"(chose {choice['moe.top_k']}; capped at n_routed)")
    out["notes"] = ("Adjusted to stay legal: " + "; ".join(grown.notes) + ".") if grown.notes else None
    if grown.config is None:
        first = next(iter(grown.check.errors.values()))
        out["message"] = _alert(f"These knob values make the config invalid: {first}")
        out["figure"] = empty_fig("No curves for an invalid config", height=640)
        return out
    now, before = growth.sizes(grown.config), growth.sizes(base.config)
    out["cards"] = panel.cards(now, before)
    sweeps = {key: growth.sweep(values, tier, choice, key, growth.ladder(key, effective[key]))
              for key in growth.SWEEPS}
    out["figure"] = growth_fig(sweeps, {k: effective[k] for k in growth.SWEEPS},
                               {k: getattr(now, k) for k in growth.SWEPT}, log_x=growth.LOG_X)
    out["copy_disabled"], out["pending"] = not grown.changes, grown.changes or None
    return out


def copy_payload(pending: Any) -> tuple[dict | None, Any]:
    """(config-inject data, status line) for a press of Copy."""
    if not isinstance(pending, dict) or not pending:
        return None, html.Span("Nothing to copy: the knobs equal the config.",
                               className="text-muted")
    listed = ", ".join(f"{growth.short(k)}={v}" for k, v in pending.items())
    return ({"values": pending, "source": "Growth", "ts": time.time()},
            ok(f"Copied into the config editor: {listed}."))


def register(app, cockpit: AppContext) -> None:
    @app.callback(*[Output(i, prop) for i in SLIDER_IDS for prop in ("max", "marks", "value")],
                  Output(ids.GROWTH_LADDERS, "data"),
                  *[Input(form.BY_KEY[k].component_id, "value") for k in FOLLOW_KEYS],
                  Input(ids.GROWTH_RESET, "n_clicks"), State(ids.GROWTH_LADDERS, "data"))
    def follow_form(*args):
        *raw, _reset, ladders = args
        setups = follow(dict(zip(FOLLOW_KEYS, raw, strict=True)))     # None: that slider stays
        ladders = {**(ladders or {}), **{k: s["values"] for k, s in setups.items() if s}}
        sliders = [(len(s["values"]) - 1, panel.marks(s["values"]), s["index"]) if s else (no_update,) * 3
                   for s in setups.values()]
        return (*(prop for props in sliders for prop in props), ladders)

    @app.callback(output=dict(readouts={k: Output(ids.growth_value_id(k), "children") for k in KNOBS},
                              message=Output(ids.GROWTH_MESSAGE, "children"),
                              cards=Output(ids.GROWTH_CARDS, "children"),
                              figure=Output(ids.GROWTH_CURVES, "figure"),
                              notes=Output(ids.GROWTH_NOTES, "children"),
                              copy_disabled=Output(ids.GROWTH_COPY, "disabled"),
                              pending=Output(ids.GROWTH_PENDING, "data")),
                  inputs=[*[Input(i, "value") for i in SLIDER_IDS],
                          *[Input(i, "value") for i in form.FIELD_IDS], Input(common.CONFIG_TIER, "value"),
                          Input(common.TABS, "active_tab")],
                  state=[State(ids.GROWTH_LADDERS, "data")])
    @visible_only(common.TAB_GROWTH)
    def update(*args):
        *raw, tier, _tab, ladders = args[len(KNOBS):]
        choice = chosen(list(args[:len(KNOBS)]), ladders or {})
        return growth_view(form.values_of(raw), tier, choice)

    @app.callback(Output(common.CONFIG_INJECT, "data", allow_duplicate=True),
                  Output(ids.GROWTH_STATUS, "children"),
                  Input(ids.GROWTH_COPY, "n_clicks"), State(ids.GROWTH_PENDING, "data"),
                  prevent_initial_call=True)
    def copy(_n, pending):
        payload, status = copy_payload(pending)
        return (payload if payload is not None else no_update), status
