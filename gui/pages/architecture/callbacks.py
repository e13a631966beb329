"""Architecture tab: redraws the diagram, size cards and per-block table on every change of the
config sidebar (while the tab is open). An invalid form gives a message naming the first error,
never a traceback. `arch_view` is the callback body, a plain function tests call."""
from __future__ import annotations

from typing import Any

import dash_bootstrap_components as dbc
from dash import Input, Output, html

from ... import form
from ... import ids as common
from ...components.visible import visible_only
from ...context import AppContext
from ...figures.architecture import architecture_fig
from ...figures.base import empty_fig
from ...view.architecture import describe
from . import ids
from . import layout as panel


def _errors_alert(errors: dict) -> dbc.Alert:
    n = len(errors)
    first = next(iter(errors.values()))
    return dbc.Alert([html.Strong(f"The config has {n} error{'s' * (n > 1)}: "),
                      f"fix {'them' if n > 1 else 'it'} in the sidebar to draw the model "
                      f"(first: {first})."], color="warning", class_name="py-2 small")


def arch_view(values: dict[str, Any], tier: Any) -> dict[str, Any]:
    """What the tab shows for these form values: message, cards, figure, table."""
    result = form.check(values, tier)
    if not result.ok:
        return {"message": _errors_alert(result.errors), "cards": [], "table": None,
                "figure": empty_fig("No diagram while the config has errors", height=420)}
    try:
        view = describe(result.config)
    except Exception as exc:  # a sizing bug must not take the tab down: say what failed
        return {"message": dbc.Alert(f"Could not size this config: {type(exc).__name__}: {exc}",
                                     color="danger", class_name="py-2 small"), "cards": [], "table": None,
                "figure": empty_fig("umoec.sizing failed on this config", height=420)}
    notes = list(result.warnings.values())
    if view.lower_case_unrouted:
        notes.append(f"{view.lower_case_unrouted} lower-case block(s) run on every byte: "
                     "mod.enabled is off.")
    message = (dbc.Alert([html.Div(n) for n in notes], color="info", class_name="py-2 small")
               if notes else None)
    return {"message": message, "cards": panel.cards(view),
            "figure": architecture_fig(view), "table": panel.block_table(view)}


def register(app, cockpit: AppContext) -> None:
    @app.callback(Output(ids.ARCH_MESSAGE, "children"), Output(ids.ARCH_CARDS, "children"),
                  Output(ids.ARCH_DIAGRAM, "figure"), Output(ids.ARCH_TABLE, "children"),
                  *[Input(i, "value") for i in form.FIELD_IDS], Input(common.CONFIG_TIER, "value"),
                  Input(common.TABS, "active_tab"))
    @visible_only(common.TAB_ARCH)
    def redraw(*args):
        *raw, tier, _tab = args
        out = arch_view(form.values_of(raw), tier)
        return out["message"], out["cards"], out["figure"], out["table"]
