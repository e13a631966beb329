"""A tab's pane is built the first time the tab is shown and then kept (gui/panes.py): the
server builds it, the page shows one pane and hides the others (in the page, no request)."""
from __future__ import annotations

import json

from dash import Input, Output, State, no_update
from dash.exceptions import PreventUpdate

from ... import ids, panes
from ...context import AppContext

SHOW_JS = """function(active) {
    const tabs = %s;
    const shown = tabs.includes(active) ? active : tabs[0];
    return tabs.map(t => t === shown ? %s : %s);
}""" % (json.dumps(list(ids.TAB_IDS)), json.dumps(panes.PANE), json.dumps(panes.HIDDEN))  # noqa: UP031 (JavaScript braces)


def register(app, cockpit: AppContext) -> None:
    app.clientside_callback(SHOW_JS, *[Output(ids.pane(t), "className") for t in ids.TAB_IDS],
                            Input(ids.TABS, "active_tab"))

    # not at page load: the page is served with the first tab's pane built
    @app.callback(*[Output(ids.pane(t), "children") for t in ids.TAB_IDS],
                  Output(ids.PANES_MOUNTED, "data"), Input(ids.TABS, "active_tab"),
                  State(ids.PANES_MOUNTED, "data"), prevent_initial_call=True)
    def build_pane(active, mounted):
        built, now = panes.mount(active, mounted)
        if not built:
            raise PreventUpdate
        return (*(built.get(t, no_update) for t in ids.TAB_IDS), now)
