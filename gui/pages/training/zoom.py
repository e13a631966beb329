"""Training tab's loss chart: zoom re-aggregation and "follow live" (callbacks.py draws the
chart, then extends it by Patch).

A zoom or pan re-reads the run and replaces the two train traces (raw, smoothed, smoothed on
every row first) with the visible range at full resolution plus a coarse overview
(series.view_indices), fits y inside it unless the user chose a y range, and turns "follow live"
off; a double-click or "follow live" on puts the whole run back. A full redraw while a zoom is
held draws the window itself (`keep_zoom`); one that could not (asked for before the zoom, or a
new run's first draw) is followed by the zoom re-applied (`track_redraws`, on the chart state,
so the every-tick input never delays a zoom). `training_zoom` and `track_redraws` are the
callback bodies as plain functions.
"""
from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import numpy as np
import plotly.graph_objects as go
from dash import Input, Output, Patch, State, ctx, no_update
from dash.exceptions import PreventUpdate

from ... import ids as common
from ...components import zoom_events
from ...context import AppContext
from ...figures import series
from ...figures.series import MAX_POINTS, Smoothing, smooth
from ...services.compare import CompareError, load_run
from . import ids

OUTPUTS = ("figure", "zoom", "follow")
SIG_KEYS = ("run", "gen", "smoothing", "method", "clip", "log_y")   # a change means a full redraw


def _held_window(zoom: dict | None, name: str | None) -> list | None:
    """The x window a zoom store holds for run `name` (None: unzoomed, or held for another)."""
    return (zoom or {}).get("window") if (zoom or {}).get("run") == name else None


def y_range(ys: list, xs: list, window: tuple[float, float], log_y: bool) -> list | None:
    """The y range (5% margin; log10 units on a log axis) that fits the points inside the x
    window, so a zoom on a late, flat stretch shows its detail; None when nothing is inside."""
    lo, hi = window
    x = np.asarray(xs, dtype=np.float64)
    y = np.asarray(ys, dtype=np.float64)
    y = y[(x >= lo) & (x <= hi) & np.isfinite(y)]
    if log_y:
        y = np.log10(y[y > 0])
    if not len(y):
        return None
    bottom, top = float(y.min()), float(y.max())
    pad = (top - bottom) * 0.05 or max(abs(top) * 0.05, 1e-3)
    return [bottom - pad, top + pad]


def _view(runs_dir: Path, name: str, chart: dict | None, window: list | None,
          fit_y: bool = True) -> tuple[list, dict] | None:
    """(train traces 0 and 1 as (x, y), axis settings) for `window` (None: the whole run) with the
    smoothing and log y of the chart state `chart`; with `fit_y` the y axis fits what is inside
    (off when the user chose a y range). The window is drawn at full resolution with a coarse
    overview around it; None when the run is unreadable."""
    try:
        run = load_run(runs_dir, name)
    except CompareError:
        return None
    if not len(run.step):
        return None
    traces = [series.points(run.step.astype(float), y, tuple(window) if window else None, MAX_POINTS)
              for y in (run.train_bits, smooth(run.train_bits, Smoothing.from_state(chart)))]
    if not window:
        return traces, {"xaxis": {"autorange": True}} | ({"yaxis": {"autorange": True}} if fit_y else {})
    axes = {"xaxis": {"range": list(window), "autorange": False}}
    xs, ys = ([v for t in traces for v in t[i]] for i in (0, 1))
    fitted = y_range(ys, xs, tuple(window), bool((chart or {}).get("log_y"))) if fit_y else None
    if fitted is not None:
        axes["yaxis"] = {"range": fitted, "autorange": False}
    return traces, axes


def _patch(runs_dir: Path, name: str, chart: dict | None, window: list | None,
           fit_y: bool = True) -> Any:
    """`_view` written into the figure as a Patch; no_update when the run is unreadable."""
    view = _view(runs_dir, name, chart, window, fit_y)
    if view is None:
        return no_update
    patch = Patch()
    for trace, (xs, ys) in enumerate(view[0]):
        patch["data"][trace]["x"] = xs
        patch["data"][trace]["y"] = ys
    for axis, settings in view[1].items():
        for key, value in settings.items():
            patch["layout"][axis][key] = value
    return patch


def keep_zoom(runs_dir: Path, out: dict[str, Any], name: str | None, zoom: dict | None) -> None:
    """The training callback's answer `out` fixed up for a held zoom. A full redraw (a go.Figure)
    gets a fresh `drawn` mark, so `track_redraws` sees every redraw; while a zoom is held on this
    run the redraw shows it (the state says the window it `held`), so the chart never jumps to
    the whole run and back. Patches keep the last draw's marks."""
    figure, state = out.get("loss"), out.get("state")
    if not isinstance(figure, go.Figure) or not isinstance(state, dict):
        return
    state["drawn"] = uuid.uuid4().hex[:12]
    state.pop("held", None)
    window = _held_window(zoom, name)
    if not window or len(figure.data) < 2 or not name:
        return
    view = _view(runs_dir, name, state, window)
    if view is None:
        return
    for trace, (xs, ys) in enumerate(view[0]):
        figure.data[trace].update(x=xs, y=ys)
    figure.update_layout(view[1])
    state["held"] = list(window)


def _user_set_y(relayout: Any) -> bool:
    """A box zoom (or a y-axis drag) names a y range: the user's, kept as is."""
    return isinstance(relayout, dict) and any(str(k).startswith("yaxis") and "range" in str(k)
                                              for k in relayout)


def _extent(runs_dir: Path, name: str) -> list | None:
    try:
        run = load_run(runs_dir, name)
    except CompareError:
        return None
    return [float(run.step[0]), float(run.step[-1])] if len(run.step) > 1 else None


def training_zoom(runs_dir: Path, name: str | None, trigger: str | None, relayout: Any,
                  follow: Any, chart: dict | None, zoom: dict | None) -> dict[str, Any]:
    """A zoom/pan/double-click (relayoutData) or the follow-live switch: the figure Patch, the
    new zoom store ({"run", "window"}) and the switch's new value."""
    out: dict[str, Any] = {k: no_update for k in OUTPUTS}
    if not name:
        return out
    zoom = dict(zoom or {})
    window = _held_window(zoom, name)
    if trigger == ids.TRAINING_LOSS:
        z = series.parse_relayout(relayout)
        if z is None:
            return out
        window = None if z.reset else [z.lo, z.hi]
        if window is not None and follow:
            out["follow"] = False
        elif window is None and not follow:
            out["follow"] = True  # a double-click fits the whole run, which then grows: following
        out["figure"] = _patch(runs_dir, name, chart, window, fit_y=not _user_set_y(relayout))
    elif trigger == ids.TRAINING_FOLLOW:
        if follow:
            window = None
            out["figure"] = _patch(runs_dir, name, chart, None)
        elif window is None:
            window = _extent(runs_dir, name)  # hold the x range the chart shows now
            out["figure"] = _patch(runs_dir, name, chart, window) if window else no_update
    new = {"run": name, "window": window}
    if new != zoom:
        out["zoom"] = new
    return out


def track_redraws(runs_dir: Path, name: str | None, chart: dict | None,
                  zoom: dict | None, seen: dict | None) -> tuple[Any, Any]:
    """After each training tick: (figure Patch or no_update, new `seen`): a held zoom re-applied
    when the chart was redrawn from scratch without it. Another run drawn whole needs nothing
    (sending an autorange from here once undid a zoom made right after its first draw)."""
    if not isinstance(chart, dict) or not chart.get("run"):
        return no_update, no_update
    seen = dict(seen or {})
    sig, points = [chart.get(k) for k in SIG_KEYS], chart.get("points", 0) or 0
    redrawn = (sig != seen.get("chart") or points < seen.get("points", 0)
               or chart.get("drawn") != seen.get("drawn"))
    figure: Any = no_update
    window = _held_window(zoom, name) if chart["run"] == name else None
    if (window is not None and (redrawn or chart["run"] != seen.get("run"))
            and chart.get("held") != list(window)):
        figure = _patch(runs_dir, name, chart, window)
    return figure, {"run": chart["run"], "chart": sig, "points": points,
                    "drawn": chart.get("drawn")}


def follows_new_run(name: str | None, chart: dict | None, zoom: dict | None,
                    seen: dict | None, follow: Any) -> bool:
    """True when the chart has just switched to another run, drawn whole (no zoom held for it),
    while "follow live" is off: the switch is turned back on, since the chart follows that run."""
    if not isinstance(chart, dict) or not chart.get("run") or follow:
        return False
    held = chart["run"] == name and _held_window(zoom, name)
    previous = (seen or {}).get("run")
    return previous is not None and chart["run"] != previous and not held


def register(app, cockpit: AppContext) -> None:
    runs_dir = cockpit.settings.runs_dir
    zoom_events.filter_x_zooms(app, ids.TRAINING_LOSS)

    @app.callback(Output(ids.TRAINING_LOSS, "figure", allow_duplicate=True),
                  Output(ids.TRAINING_ZOOM, "data"), Output(ids.TRAINING_FOLLOW, "value"),
                  Input(common.x_zoom(ids.TRAINING_LOSS), "data"), Input(ids.TRAINING_FOLLOW, "value"),
                  State(ids.TRAINING_CHART_STATE, "data"), State(common.RUN_SELECT, "value"),
                  State(ids.TRAINING_ZOOM, "data"), prevent_initial_call=True)
    def zoom_or_follow(x_zoom, follow, chart, name, zoom):
        trigger = zoom_events.triggered_graph(ctx.triggered_id, ids.TRAINING_LOSS)
        out = training_zoom(runs_dir, name, trigger, zoom_events.event(x_zoom), follow, chart,
                            zoom)
        if all(v is no_update for v in out.values()):
            raise PreventUpdate
        return tuple(out[k] for k in OUTPUTS)

    @app.callback(Output(ids.TRAINING_LOSS, "figure", allow_duplicate=True),
                  Output(ids.TRAINING_ZOOM_SEEN, "data"),
                  Output(ids.TRAINING_FOLLOW, "value", allow_duplicate=True),
                  Input(ids.TRAINING_CHART_STATE, "data"), State(common.RUN_SELECT, "value"),
                  State(ids.TRAINING_ZOOM, "data"), State(ids.TRAINING_ZOOM_SEEN, "data"),
                  State(ids.TRAINING_FOLLOW, "value"), prevent_initial_call=True)
    def reapply(chart, name, zoom, seen, follow):
        figure, new_seen = track_redraws(runs_dir, name, chart, zoom, seen)
        follow_now = True if follows_new_run(name, chart, zoom, seen, follow) else no_update
        if figure is no_update and new_seen == seen and follow_now is no_update:
            raise PreventUpdate
        return figure, new_seen, follow_now
