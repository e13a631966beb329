"""The cockpit: python gui/app.py [--runs-dir DIR] [--host 127.0.0.1] [--port 8050]

Builds the layout (config sidebar beside the tabs), registers every callback (gui/pages) and
serves on loopback by default. See docs/cockpit.md.
Binding to any other address requires an access token (--token or UMOEC_TOKEN).
"""
from __future__ import annotations

import argparse
import hmac
import ipaddress
import logging
import os
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import dash
import dash_bootstrap_components as dbc
from dash import dcc, html
from flask import Response, request

from gui import ids, panes
from gui.context import EXTENSION, AppContext, CockpitSettings
from gui.pages import register_all
from gui.pages.header import layout as header
from gui.pages.header.ticks import served_pulse
from gui.pages.notifications import layout as notify_panel
from gui.pages.sidebar import layout as config_panel
from gui.services import presets as user_presets
from gui.services.compress_jobs import DEFAULT_JOB_TIMEOUT_S
from gui.services.launcher import STOP_TIMEOUT_S
from gui.services.notify import reconcile_dead_runs
from gui.services.runs import run_list
from gui.services.uploads import DEFAULT_MAX_UPLOAD_MB, DEFAULT_UPLOAD_DIR

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_RUNS_DIR = ROOT / "runs"
DEFAULT_DATA_DIR = ROOT / "data"
TOKEN_COOKIE = "umoec_token"


def build_layout(runs_dir: Path, refresh_ms: int, mounted: tuple[str, ...] = (panes.FIRST,),
                 runs: list[dict] | None = None, pulse: dict | None = None) -> html.Div:
    """The page: header, stores, config sidebar, tabs; only the panes in `mounted` built (all of
    them: the validation layout). `runs`, `pulse`: as the page is served (serve_layout)."""
    return html.Div([
        header.layout(str(runs_dir), refresh_ms, runs),
        dcc.Store(id=ids.PULSE, storage_type="memory", data=pulse),
        dcc.Store(id=ids.HEADER_TICK, storage_type="memory"),
        *[dcc.Store(id=ids.tab_tick(t), storage_type="memory") for t in ids.TAB_IDS],
        # a checkpoint clicked on the loss chart, and which pickers applied it (checkpoint_select)
        dcc.Store(id=ids.SELECTED_CHECKPOINT, storage_type="memory"),
        dcc.Store(id=ids.PANES_MOUNTED, storage_type="memory", data=[panes.FIRST]),
        notify_panel.layout(),
        dbc.Container(dbc.Row([
            dbc.Col(config_panel.layout(), xs=12, lg=4, xxl=3, class_name="config-sidebar"),
            dbc.Col(panes.layout(mounted), xs=12, lg=8, xxl=9),
        ], class_name="g-3"), fluid=True),
    ])


def serve_layout(ctx: AppContext):
    """The layout function: each page load gets the run list and its first run's pulse as of now."""
    settings = ctx.settings

    def layout() -> html.Div:
        runs = run_list(settings.runs_dir, ctx.launcher)
        pulse = served_pulse(ctx, runs[0]["value"] if runs else None)
        return build_layout(settings.runs_dir, settings.refresh_ms, runs=runs, pulse=pulse)
    return layout


def _install_token_check(server, token: str) -> None:
    """Every request must carry the token: ?token=..., the cookie it sets, or a Bearer header."""
    @server.before_request
    def check_token():
        given = (request.args.get("token") or request.cookies.get(TOKEN_COOKIE)
                 or request.headers.get("Authorization", "").removeprefix("Bearer ").strip())
        if not given or not hmac.compare_digest(given.encode(), token.encode()):
            return Response("401: this cockpit needs its access token (open the URL printed at "
                            "start, with ?token=...)\n", status=401, mimetype="text/plain")
        return None

    @server.after_request
    def remember_token(response):
        if request.args.get("token"):
            response.set_cookie(TOKEN_COOKIE, token, httponly=True, samesite="Strict")
        return response


def create_app(runs_dir: str | os.PathLike = DEFAULT_RUNS_DIR, token: str | None = None,
               refresh_ms: int = 2000, stop_timeout: float = STOP_TIMEOUT_S,
               data_dir: str | os.PathLike | None = None,
               upload_dir: str | os.PathLike | None = None, max_upload_mb: float | None = None,
               job_timeout: float | None = None, presets_dir: str | os.PathLike | None = None) -> dash.Dash:
    runs_dir = Path(runs_dir).resolve()
    settings = CockpitSettings(
        runs_dir=runs_dir, data_dir=Path(data_dir or DEFAULT_DATA_DIR).resolve(),
        presets_dir=Path(presets_dir).resolve() if presets_dir else user_presets.default_dir(runs_dir),
        upload_dir=Path(upload_dir or DEFAULT_UPLOAD_DIR),
        max_upload_mb=float(max_upload_mb or DEFAULT_MAX_UPLOAD_MB),
        job_timeout_s=float(job_timeout or DEFAULT_JOB_TIMEOUT_S),
        stop_timeout_s=float(stop_timeout), refresh_ms=int(refresh_ms))
    # callbacks of panes not built yet wait for them; all are checked on the full layout (below)
    app = dash.Dash(__name__, title="u-moec-tiny cockpit", update_title=None,
                    assets_folder=str(Path(__file__).parent / "assets"), suppress_callback_exceptions=False)
    # Uploads arrive base64-encoded inside a callback request: cap any request body at that size.
    app.server.config["MAX_CONTENT_LENGTH"] = int(1.4 * settings.max_upload_mb * 1e6) + (1 << 20)
    # runs that died while no cockpit ran are marked crashed now; then the watchdog keeps them honest
    reconcile_dead_runs(runs_dir)
    ctx = AppContext.build(settings)
    app.server.extensions[EXTENSION] = ctx
    ctx.watchdog.start(owner=app.server)
    if token:
        _install_token_check(app.server, token)
    app.layout = serve_layout(ctx)
    app.validation_layout = build_layout(runs_dir, refresh_ms, mounted=ids.TAB_IDS)
    register_all(app, ctx)
    return app


def is_loopback(host: str) -> bool:
    try:
        return host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python gui/app.py", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs-dir", type=Path, default=DEFAULT_RUNS_DIR)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8050)
    p.add_argument("--token", default=os.environ.get("UMOEC_TOKEN"),
                   help="access token, required for a non-loopback --host (or UMOEC_TOKEN)")
    p.add_argument("--refresh-ms", type=int, default=2000, help="refresh interval")
    p.add_argument("--presets-dir", type=Path, help="user presets folder (default: <runs-dir>/../presets)")
    p.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR, help="the Datasets tab's folder")
    p.add_argument("--stop-timeout", type=float, default=STOP_TIMEOUT_S,
                   help="seconds Stop waits after SIGTERM before SIGKILL (default %(default)s)")
    p.add_argument("--upload-dir", type=Path, default=DEFAULT_UPLOAD_DIR,
                   help="folder the Compression tab stores uploads in (default %(default)s)")
    p.add_argument("--max-upload-mb", type=float, default=DEFAULT_MAX_UPLOAD_MB, help="largest upload in MB")
    p.add_argument("--job-timeout", type=float, default=DEFAULT_JOB_TIMEOUT_S,
                   help="seconds a compression / evaluation job may run (default %(default)s)")
    p.add_argument("--debug", action="store_true", help="Dash debug mode (loopback only)")
    a = p.parse_args(argv)
    if not is_loopback(a.host) and not a.token:
        print(f"app.py: refusing to serve on {a.host} without an access token: pass --token "
              "or set UMOEC_TOKEN (anyone who can reach the port could start runs)", file=sys.stderr)
        return 2
    if a.debug and not is_loopback(a.host):
        print("app.py: --debug is only allowed on a loopback host", file=sys.stderr)
        return 2
    a.runs_dir.mkdir(parents=True, exist_ok=True)
    if not a.debug:  # one line per request (several per refresh tick) drowns everything else
        logging.getLogger("werkzeug").setLevel(logging.WARNING)
    app = create_app(**{k: v for k, v in vars(a).items() if k not in ("host", "port", "debug")})
    suffix = f"/?token={a.token}" if a.token else "/"
    print(f"u-moec-tiny cockpit on http://{a.host}:{a.port}{suffix} (runs: {a.runs_dir})", flush=True)
    app.run(host=a.host, port=a.port, debug=a.debug)
    return 0


if __name__ == "__main__":
    sys.exit(main())
