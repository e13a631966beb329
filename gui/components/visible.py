"""`visible_only(tab)`: a callback of a tab that does nothing while another tab is shown.

A hidden tab's callbacks still fire on inputs they share with the visible tab (the run picker);
they must not read the run or redraw. The callback declares `Input(ids.TABS, "active_tab")` (so
switching to the tab redraws it) or a State of it; this wrapper reads that value from Dash's
callback context, so the callback's own signature keeps the argument, unused.
"""
from __future__ import annotations

import functools
from collections.abc import Callable, Hashable

from dash import ctx
from dash.exceptions import PreventUpdate

from .. import ids

ACTIVE = f"{ids.TABS}.active_tab"


def shown_tab() -> str:
    """The tab the page shows now; dbc.Tabs shows the first tab while active_tab is unset."""
    values = {**ctx.states, **ctx.inputs}
    if ACTIVE not in values:
        raise RuntimeError(f"a visible_only callback must take {ACTIVE} as an Input or State")
    return values[ACTIVE] or ids.TAB_IDS[0]


def visible_only(tab: str, *, unless: Hashable | None = None) -> Callable:
    """Run the callback only while `tab` is shown, or when `unless` (a component id) fired it."""
    def wrap(fn: Callable) -> Callable:
        @functools.wraps(fn)
        def callback(*args, **kwargs):
            if shown_tab() != tab and (unless is None or ctx.triggered_id != unless):
                raise PreventUpdate  # hidden tab: no reads; switching to it triggers a refresh
            return fn(*args, **kwargs)
        return callback
    return wrap
