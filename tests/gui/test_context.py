"""The cockpit's context (gui/context.py): typed settings and services built once per app,
reached by pages through register(app, cockpit) and inside requests through current()."""
import ast
from pathlib import Path

from gui import context
from gui.services import forge, presets

GUI = Path(__file__).resolve().parents[2] / "gui"


def test_create_app_builds_one_typed_context(tmp_path):
    from gui.app import create_app
    app = create_app(tmp_path / "runs", data_dir=tmp_path / "data", max_upload_mb=3,
                     job_timeout=12, stop_timeout=4, refresh_ms=1500)
    ctx = context.of(app)
    s = ctx.settings
    assert s.runs_dir == (tmp_path / "runs").resolve() and s.data_dir == (tmp_path / "data").resolve()
    assert s.presets_dir == presets.default_dir(tmp_path / "runs")
    assert (s.max_upload_bytes, s.job_timeout_s, s.stop_timeout_s, s.refresh_ms) == (3_000_000, 12.0,
                                                                                      4.0, 1500)
    assert ctx.launcher.stop_timeout == 4 and ctx.watchdog.launcher is ctx.launcher
    # one supervisor for every kind of child the cockpit starts
    assert ctx.launcher.supervisor is ctx.supervisor is ctx.jobs.runner.supervisor
    assert ctx.datasets.supervisor is ctx.supervisor
    assert ctx.jobs.timeout == 12.0 and ctx.datasets.data_dir == s.data_dir
    assert app.server.config["MAX_CONTENT_LENGTH"] > 3_000_000
    # inside a request, code with no handle on the app finds the same services
    with app.server.test_request_context("/"):
        assert context.current() is ctx
        assert forge.registry() is ctx.forge and presets.active_dir() == s.presets_dir
    assert context.current() is None and forge.registry() is None and presets.active_dir() is None
    ctx.watchdog.stop()


def test_pages_read_the_context_not_string_keys_in_the_server_config():
    """No callback module reaches into app.server.config or Flask's current_app: a page gets
    what it needs from register(app, cockpit)."""
    for path in sorted((GUI / "callbacks").glob("*.py")):
        text = path.read_text()
        assert "server.config" not in text and "current_app" not in text, path.name
        tree = ast.parse(text)
        for fn in (n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "register"):
            assert [a.arg for a in fn.args.args] == ["app", "cockpit"], path.name
