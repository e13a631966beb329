"""The top bar: run selector and the selected run's honest status."""
from __future__ import annotations

import dash_bootstrap_components as dbc
from dash import dcc, html

from ... import ids as common
from . import ids


def layout(runs_dir: str, refresh_ms: int, runs: list[dict] | None = None) -> html.Div:
    """`runs`: the run selector's options as the page is served (gui/services/runs.py run_list), so the
    tabs can show a run at page load without waiting for the first refresh."""
    return html.Div([
        dbc.Navbar(dbc.Container([
            dbc.NavbarBrand("u-moec-tiny cockpit", class_name="fw-bold"),
            html.Div([
                html.Span("Run", className="text-light me-2 small"),
                dcc.Dropdown(id=common.RUN_SELECT, options=runs or [], clearable=False,
                             placeholder="no runs yet", style={"minWidth": "320px"},
                             persistence=True, persistence_type="local"),
                dbc.Badge("no run", id=ids.RUN_STATUS, color="secondary",
                          class_name="ms-3 fs-6 run-status-badge"),
            ], className="d-flex align-items-center"),
        ], fluid=True), color="dark", dark=True, class_name="mb-3"),
        html.Div(f"Runs folder: {runs_dir}", id=ids.RUNS_DIR_NOTE,
                 className="text-muted small px-3"),
        dcc.Interval(id=ids.REFRESH, interval=refresh_ms, n_intervals=0),
    ])
