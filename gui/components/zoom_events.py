"""A chart's x-axis zooms, pans and double-clicks, passed on to the server without the rest of
its relayout events (autosize, legend clicks, y-only drags).

Dash answers only the newest request of a callback, so an autosize event arriving while the server
re-aggregates a zoom would drop that zoom's answer. A clientside callback copies only the events
that touch an x axis (series.X_ZOOM_KEY) into a memory store (ids.x_zoom), stamped so the same zoom
made twice is still an event; the server's zoom callbacks listen to that store.
"""
from __future__ import annotations

import json
from typing import Any

from dash import Input, Output

from .. import ids
from ..figures.series import X_ZOOM_KEY

X_ZOOM_JS = """function(relayout) {
  const nu = window.dash_clientside.no_update;
  if (!relayout || typeof relayout !== 'object') return nu;
  const key = new RegExp(%s);
  return Object.keys(relayout).some(k => key.test(k)) ? {event: relayout, at: Date.now()} : nu;
}""" % json.dumps(X_ZOOM_KEY)  # noqa: UP031 (JavaScript braces)


def filter_x_zooms(app, *graphs: str) -> None:
    """One filter per graph: relayoutData -> the ids.x_zoom(graph) store (in the graph's pane)."""
    for graph in graphs:
        app.clientside_callback(X_ZOOM_JS, Output(ids.x_zoom(graph), "data"),
                                Input(graph, "relayoutData"), prevent_initial_call=True)


def event(store: Any) -> Any:
    """The relayoutData a zoom store holds (None when empty)."""
    return store.get("event") if isinstance(store, dict) else None


def triggered_graph(trigger: Any, *graphs: str) -> Any:
    """The graph whose zoom store fired the callback (its bodies take the graph's id), else
    `trigger` itself (another input, e.g. a follow-live switch)."""
    return next((g for g in graphs if trigger == ids.x_zoom(g)), trigger)
