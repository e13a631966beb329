"""Training tab's loss chart: zoom re-aggregation and "follow live".

The chart itself is drawn and extended by callbacks.py (full draw, then dash.Patch per
tick). This module only listens beside it:
- a zoom or pan (relayoutData) re-reads the run at full resolution and replaces the two train
  traces (raw, smoothed) with the visible range re-aggregated plus a coarse overview around it
  (gui/figures/series.view_indices), as a Patch; a zoom turns "follow live" off;
- the y axis fits what is inside the zoomed x range (a late, flat stretch shows its detail),
  unless the user's box zoom chose a y range;
- a double-click (autorange) or "follow live" switched on puts the whole-run overview back and
  lets the x axis grow with the run again (a double-click turns "follow live" on: the chart
  follows); "follow live" switched off holds the current x range;
- when the training callback redraws the chart from scratch while a zoom is held (smoothing
  method, strength or clipping, or log-y changed, or its periodic re-downsampling), the redraw
  itself shows the held window at full resolution (`keep_zoom`); a redraw that could not (it
  was asked for before the zoom, or the zoom was made on a newly selected run before its first
  draw came back) is followed by the zoom re-applied (`track_redraws`, a second callback on the
  chart state, so the every-tick input never delays a user's zoom); another run drawn whole
  turns "follow live" back on (the switch says what the chart does).
The smoothing the chart state names (series.Smoothing: EMA, running mean or none, clipped or
not) is computed on every row (series.smooth) before any point is picked, so a zoomed line is
the same line as the unzoomed one.
`training_zoom` and `track_redraws` are the callback bodies as plain functions.
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


def _held_window(zoom: dict | None, name: str | None) -> list | None:
    """The x window a zoom store holds for run `name` (None: unzoomed, or held for another)."""
    return (zoom or {}).get("window") if (zoom or {}).get("run") == name else None


def _chart_sig(chart: dict | None) -> list | None:
    if not isinstance(chart, dict):
        return None
    return [chart.get("run"), chart.get("gen"), chart.get("smoothing"), chart.get("method"),
            chart.get("clip"), chart.get("log_y")]


def y_range(ys: list, xs: list, window: tuple[float, float], log_y: bool) -> list | None:
    """The y range that fits the points inside the x window (5% margin; log10 units on a log
    axis), so a zoom on a late, flat stretch of the curve shows its detail; None when nothing
    plottable is inside."""
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


def _window_traces(runs_dir: Path, name: str, smoothing: Smoothing,
                   window: list | None) -> list[tuple[list, list]] | None:
    """(x, y) of train traces 0 (raw) and 1 (smoothed) for `window` (None: the whole run): the
    window at full resolution with a coarse overview around it; None when the run is unreadable."""
    try:
        run = load_run(runs_dir, name)
    except CompareError:
        return None
    if not len(run.step):
        return None
    x = run.step.astype(float)
    win = tuple(window) if window else None
    return [series.points(x, y, win, MAX_POINTS)
            for y in (run.train_bits, smooth(run.train_bits, smoothing))]


def _patch(runs_dir: Path, name: str, smoothing: Smoothing, window: list | None,
           log_y: bool = False, fit_y: bool = True) -> Patch | None:
    """Train traces 0 (raw) and 1 (smoothed) for `window` (None: the whole run), and the x range
    written into the figure. With `fit_y` the y axis fits what is inside the window (the whole
    run when unzoomed); off when the user chose a y range."""
    traces = _window_traces(runs_dir, name, smoothing, window)
    if traces is None:
        return None
    patch = Patch()
    for trace, (xs, ys) in enumerate(traces):
        patch["data"][trace]["x"] = xs
        patch["data"][trace]["y"] = ys
    if window:
        patch["layout"]["xaxis"]["range"] = list(window)
        patch["layout"]["xaxis"]["autorange"] = False
        fitted = _fit(traces, window, log_y) if fit_y else None
        if fitted is not None:
            patch["layout"]["yaxis"]["range"] = fitted
            patch["layout"]["yaxis"]["autorange"] = False
    else:
        patch["layout"]["xaxis"]["autorange"] = True
        if fit_y:
            patch["layout"]["yaxis"]["autorange"] = True
    return patch


def _fit(traces: list[tuple[list, list]], window: list, log_y: bool) -> list | None:
    xs = [x for t in traces for x in t[0]]
    ys = [y for t in traces for y in t[1]]
    return y_range(ys, xs, tuple(window), log_y)


def keep_zoom(runs_dir: Path, out: dict[str, Any], name: str | None, zoom: dict | None) -> None:
    """The training callback's answer `out` (loss figure, chart state), fixed up for a held zoom.

    A full redraw (a go.Figure) gets a fresh `drawn` mark in the chart state, so `track_redraws`
    sees every redraw, even one whose settings and point count equal the last (a request made
    before the zoom and answered after it). While a zoom is held on this run, the redraw already
    shows it: the window at full resolution, its y axis fitted inside it, and the state names the
    window it `held`; the chart never shows the whole run between a redraw and its re-zoom (the
    zoom seen jumping out and back on a slow machine). Patches keep the last draw's marks."""
    figure, state = out.get("loss"), out.get("state")
    if not isinstance(figure, go.Figure) or not isinstance(state, dict):
        return
    state["drawn"] = uuid.uuid4().hex[:12]
    state.pop("held", None)
    window = _held_window(zoom, name)
    if not window or len(figure.data) < 2 or not name:
        return
    traces = _window_traces(runs_dir, name, Smoothing.from_state(state), window)
    if traces is None:
        return
    for trace, (xs, ys) in enumerate(traces):
        figure.data[trace].x = xs
        figure.data[trace].y = ys
    figure.update_xaxes(range=list(window), autorange=False)
    fitted = _fit(traces, window, bool(state.get("log_y")))
    if fitted is not None:
        figure.update_yaxes(range=fitted, autorange=False)
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
    smoothing = Smoothing.from_state(chart)
    log_y = bool((chart or {}).get("log_y"))
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
        out["figure"] = _patch(runs_dir, name, smoothing, window, log_y,
                               fit_y=not _user_set_y(relayout)) or no_update
    elif trigger == ids.TRAINING_FOLLOW:
        if follow:
            window = None
            out["figure"] = _patch(runs_dir, name, smoothing, None, log_y) or no_update
        elif window is None:
            window = _extent(runs_dir, name)  # hold the x range the chart shows now
            out["figure"] = (_patch(runs_dir, name, smoothing, window, log_y) if window
                             else no_update)
    new = {"run": name, "window": window}
    if new != zoom:
        out["zoom"] = new
    return out


def track_redraws(runs_dir: Path, name: str | None, chart: dict | None,
                  zoom: dict | None, seen: dict | None) -> tuple[Any, Any]:
    """After each training tick: (figure Patch or no_update, new `seen`). Re-applies a held zoom
    when the training callback has redrawn the chart from scratch (its settings changed, or its
    periodic re-downsampling: fewer points than last time). Another run needs nothing: its
    first draw is a whole new figure (no uirevision: plotly keeps no zoom of the last run). An
    autorange reset sent from here once undid a zoom made on the new run right after its draw:
    this callback's zoom store was read before the zoom's answer came back."""
    if not isinstance(chart, dict) or not chart.get("run"):
        return no_update, no_update
    seen = dict(seen or {})
    sig, points = _chart_sig(chart), chart.get("points", 0) or 0
    redrawn = (sig != seen.get("chart") or points < seen.get("points", 0)
               or chart.get("drawn") != seen.get("drawn"))
    figure: Any = no_update
    window = _held_window(zoom, name) if chart["run"] == name else None
    smoothing, log_y = Smoothing.from_state(chart), bool(chart.get("log_y"))
    if (window is not None and (redrawn or chart["run"] != seen.get("run"))
          and chart.get("held") != list(window)):
        # a held zoom the redraw did not draw (it was asked for before the zoom), or one made
        # on a new run before its first draw came back: drawn again
        figure = _patch(runs_dir, name, smoothing, window, log_y) or no_update
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
