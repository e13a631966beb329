"""Compare tab: overlay 2-8 runs, re-aggregate on zoom, follow live, table + CSV, System chart.

Redrawn when the runs get rows, a setting changes or the zoom store changes (the window re-read
at full resolution). A zoom turns follow live off; the zoom has its own callback, so a tick never
delays it. The System chart follows the loss chart's store and cache (no read of its own); a zoom
on either chart moves both. Hidden tab: no reads.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import dash_bootstrap_components as dbc
from dash import Input, Output, Patch, State, ctx, dcc, html, no_update
from dash.exceptions import PreventUpdate

from ... import ids as common
from ...components import zoom_events
from ...components.visible import visible_only
from ...context import AppContext
from ...figures import compare as figs
from ...figures import series
from ...figures.base import empty_fig
from ...services import compare as svc
from ...services.runs import run_options
from . import ids

OUTPUTS = ("figure", "data", "columns", "message", "state")
SYSTEM_OUTPUTS = ("figure", "options", "value", "note", "seen")


def _window(zoom: dict | None, keys, axis) -> list | None:
    """The zoom store's x window when it is for these runs and axis."""
    zoom = zoom or {}
    return zoom.get("window") if zoom.get("runs") == keys and zoom.get("axis") == axis else None


def _message(lines: list[str], colour: str = "secondary") -> Any:
    if not lines:
        return None
    return dbc.Alert([html.Div(line) for line in lines], color=colour, class_name="py-2 small")


def compare_zoom(trigger: str | None, relayout: Any, follow: Any, state: dict | None,
                 zoom: dict | None) -> tuple[Any, Any]:
    """(zoom store {"runs", "axis", "window"}, follow) after a zoom or the follow switch: a zoom turns
    follow off, follow off holds the extent drawn now, follow on or a double-click drops the window."""
    state = state or {}
    base = {"runs": state.get("runs"), "axis": state.get("axis")}
    old = _window(zoom, base["runs"], base["axis"])
    follow_out: Any = no_update
    if trigger in (ids.COMPARE_GRAPH, ids.COMPARE_SYSTEM_GRAPH):   # either chart's x zoom
        z = series.parse_relayout(relayout)
        if z is None:
            return no_update, no_update
        window = None if z.reset else [z.lo, z.hi]   # double-click: the whole runs again
        if window and follow:
            follow_out = False
    elif trigger == ids.COMPARE_FOLLOW:
        window = None if follow else (old or state.get("extent"))
    else:
        return no_update, no_update
    new = {**base, "window": window}
    return (new if new != zoom else no_update), follow_out


def compare_update(runs_dir: Path, keys: list | None, axis: str | None, smoothing: Any,
                   log_y: Any, zoom: dict | None, trigger: str | None,
                   state: dict | None) -> dict[str, Any]:
    """Everything the Compare tab shows, given what the page has (`state`) and the zoom store."""
    state = dict(state or {})
    keys = [k for k in (keys or []) if isinstance(k, str)]
    axis = axis if axis in figs.AXES else "step"
    smoothing = min(0.999, max(0.0, float(smoothing or 0.0)))
    log_y = bool(log_y)
    lines: list[str] = []
    if len(keys) > svc.MAX_RUNS:
        lines.append(f"Showing the first {svc.MAX_RUNS} of the {len(keys)} runs picked.")
        keys = keys[:svc.MAX_RUNS]
    window = _window(zoom, keys, axis)
    runs, errors = svc.load_runs(runs_dir, keys)
    sig = svc.data_signature(runs)
    settings = [keys, axis, smoothing, log_y, window]
    unchanged = state.get("sig") == sig and state.get("settings") == settings
    if trigger in (common.tab_tick(common.TAB_COMPARE), common.TABS) and unchanged:
        return {k: no_update for k in OUTPUTS}
    if not runs:
        fig = empty_fig("None of the picked runs can be read (see above)" if keys else
                        f"Pick 2 to {svc.MAX_RUNS} runs above to compare them", height=620)
        return dict(figure=fig, data=[], columns=[], message=_message(errors, "warning"),
                    state={"runs": keys, "axis": axis})
    fig, notes = figs.compare_fig(runs, axis, smoothing, log_y, tuple(window) if window else None)
    rows = svc.summary_rows(runs, figs.config_diff(runs))
    if len(runs) == 1:
        lines.append("Pick at least one more run to compare.")
    if window:
        lines.append(f"Showing {figs.AXES[axis]} {window[0]:,.4g} to {window[1]:,.4g}, drawn from every row "
                     "in that range; double-click the chart or turn on follow live to see the whole runs.")
    shown = [m for m in (_message(errors, "warning"), _message(lines + notes)) if m is not None]
    return dict(figure=fig, data=rows, columns=svc.table_columns(rows), message=html.Div(shown) or None,
                state={"runs": keys, "axis": axis, "sig": sig, "settings": settings,
                       "extent": svc.data_extent(runs, axis)})


def system_update(runs_dir: Path, state: dict | None, metric: str | None,
                  seen: dict | None, zoom: dict | None = None) -> dict[str, Any]:
    """The System chart of the runs and axis the loss chart drew (`state`) over its x window: nothing
    new when `seen` was drawn, only the x range (a Patch) when the window is all that changed."""
    state = state or {}
    keys = [k for k in (state.get("runs") or []) if isinstance(k, str)]
    axis = state.get("axis") if state.get("axis") in figs.AXES else "step"
    window = _window(zoom, keys, axis) if keys else None
    runs = svc.load_runs(runs_dir, keys, status=False)[0] if keys else []  # the loss chart shows errors
    options = figs.system_options(runs)
    chosen = metric if metric in figs.SYSTEM_METRICS else next(iter(figs.SYSTEM_METRICS))
    if options and chosen not in options:
        chosen = options[0]
    key = {"runs": keys, "axis": axis, "metric": chosen, "sig": svc.system_signature(runs),
           "window": window}
    if key == seen:
        return {k: no_update for k in SYSTEM_OUTPUTS}
    if isinstance(seen, dict) and {**seen, "window": window} == key:   # the same lines: move x
        fig = Patch()
        if window:
            fig["layout"]["xaxis"]["range"] = list(window)
        fig["layout"]["xaxis"]["autorange"] = not window
        return {**{k: no_update for k in SYSTEM_OUTPUTS}, "figure": fig, "seen": key}
    if keys:
        fig, notes = figs.system_fig(runs, chosen, axis)
        if window:
            fig.update_xaxes(range=list(window), autorange=False)
    else:
        fig, notes = empty_fig("Pick runs above to see their system metrics", height=figs.SYSTEM_HEIGHT), []
    return dict(figure=fig, options=[{"label": figs.SYSTEM_METRICS[c][0], "value": c} for c in options],
                value=chosen if chosen != metric else no_update,
                note=[html.Div(n) for n in notes] or None, seen=key)


def register(app, cockpit: AppContext) -> None:
    runs_dir = cockpit.settings.runs_dir
    zoom_events.filter_x_zooms(app, ids.COMPARE_GRAPH, ids.COMPARE_SYSTEM_GRAPH)

    @app.callback(Output(ids.COMPARE_RUNS, "options"), Input(common.tab_tick(common.TAB_COMPARE), "data"),
                  Input(common.TABS, "active_tab"), State(ids.COMPARE_RUNS, "options"))
    @visible_only(common.TAB_COMPARE)
    def refresh_options(_n, _tab, current):
        options = run_options(runs_dir)
        if options == current:
            raise PreventUpdate
        return options

    @app.callback(Output(ids.COMPARE_ZOOM, "data"), Output(ids.COMPARE_FOLLOW, "value"),
                  Input(common.x_zoom(ids.COMPARE_GRAPH), "data"), Input(ids.COMPARE_FOLLOW, "value"),
                  Input(common.x_zoom(ids.COMPARE_SYSTEM_GRAPH), "data"),
                  State(ids.COMPARE_STATE, "data"), State(ids.COMPARE_ZOOM, "data"),
                  prevent_initial_call=True)
    def zoom_or_follow(x_zoom, follow, system_x_zoom, state, zoom):
        trigger = zoom_events.triggered_graph(ctx.triggered_id, ids.COMPARE_GRAPH, ids.COMPARE_SYSTEM_GRAPH)
        given = zoom_events.event(system_x_zoom if trigger == ids.COMPARE_SYSTEM_GRAPH else x_zoom)
        new_zoom, new_follow = compare_zoom(trigger, given, follow, state, zoom)
        if new_zoom is no_update and new_follow is no_update:
            raise PreventUpdate
        return new_zoom, new_follow

    @app.callback(Output(ids.COMPARE_GRAPH, "figure"), Output(ids.COMPARE_TABLE, "data"),
                  Output(ids.COMPARE_TABLE, "columns"), Output(ids.COMPARE_MESSAGE, "children"),
                  Output(ids.COMPARE_STATE, "data"),
                  Input(common.tab_tick(common.TAB_COMPARE), "data"), Input(common.TABS, "active_tab"),
                  Input(ids.COMPARE_RUNS, "value"), Input(ids.COMPARE_AXIS, "value"),
                  Input(ids.COMPARE_SMOOTHING, "value"), Input(ids.COMPARE_LOGY, "value"),
                  Input(ids.COMPARE_ZOOM, "data"), State(ids.COMPARE_STATE, "data"))
    @visible_only(common.TAB_COMPARE)
    def refresh(_n, _tab, keys, axis, smoothing, log_y, zoom, state):
        out = compare_update(runs_dir, keys, axis, smoothing, log_y, zoom, ctx.triggered_id, state)
        return tuple(out[k] for k in OUTPUTS)

    @app.callback(Output(ids.COMPARE_SYSTEM_GRAPH, "figure"), Output(ids.COMPARE_SYSTEM_METRIC, "options"),
                  Output(ids.COMPARE_SYSTEM_METRIC, "value"), Output(ids.COMPARE_SYSTEM_NOTE, "children"),
                  Output(ids.COMPARE_SYSTEM_STATE, "data"),
                  Input(ids.COMPARE_STATE, "data"), Input(ids.COMPARE_SYSTEM_METRIC, "value"),
                  Input(ids.COMPARE_ZOOM, "data"), State(ids.COMPARE_SYSTEM_STATE, "data"))
    def refresh_system(state, metric, zoom, seen):
        out = system_update(runs_dir, state, metric, seen, zoom)
        if out["seen"] is no_update:
            raise PreventUpdate
        return tuple(out[k] for k in SYSTEM_OUTPUTS)

    @app.callback(Output(ids.COMPARE_CSV, "data"), Input(ids.COMPARE_CSV_BTN, "n_clicks"),
                  State(ids.COMPARE_TABLE, "derived_virtual_data"), State(ids.COMPARE_TABLE, "data"),
                  State(ids.COMPARE_TABLE, "columns"), prevent_initial_call=True)
    def export_csv(_n, shown, data, columns):
        rows = shown if shown is not None else data
        if not rows:
            raise PreventUpdate
        return dcc.send_string(svc.table_csv(rows, columns or None), "umoec-compare.csv")
