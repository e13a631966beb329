"""The cockpit process: starts, serves, refuses unsafe binds, enforces its token."""
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

from tests.conftest import ROOT


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_app(runs_dir, *extra):
    """Start the cockpit on a free loopback port; its output goes to a file (an unread pipe
    would fill up and block the server). `proc.log_path` names that file."""
    port = free_port()
    log_path = Path(tempfile.mkstemp(prefix="cockpit-", suffix=".log")[1])
    with open(log_path, "w") as log:
        proc = subprocess.Popen([sys.executable, "gui/app.py", "--runs-dir", str(runs_dir),
                                 "--port", str(port), *extra], cwd=ROOT, stdout=log,
                                stderr=subprocess.STDOUT, text=True)
    proc.log_path = log_path
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return proc, url
        except OSError:
            if proc.poll() is not None:
                raise AssertionError(log_path.read_text()) from None
            time.sleep(0.2)
    proc.kill()
    raise AssertionError("cockpit did not start: " + log_path.read_text())


def get(url, headers=None):
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {}),
                                    timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def test_non_loopback_bind_without_token_is_refused(tmp_path):
    res = subprocess.run([sys.executable, "gui/app.py", "--runs-dir", str(tmp_path), "--host",
                          "0.0.0.0"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert res.returncode == 2 and "without an access token" in res.stderr


def test_token_is_required_on_every_request(tmp_path):
    proc, url = start_app(tmp_path, "--token", "s3cret")
    try:
        assert get(url + "/")[0] == 401
        assert get(url + "/_dash-layout")[0] == 401
        assert get(url + "/?token=wrong")[0] == 401
        assert get(url + "/?token=s3cret")[0] == 200
        assert get(url + "/_dash-layout", {"Authorization": "Bearer s3cret"})[0] == 200
    finally:
        proc.terminate()
        proc.wait(10)


def test_serves_layout_and_offline_bootstrap(tmp_path):
    proc, url = start_app(tmp_path)
    try:
        status, page = get(url + "/")
        assert status == 200 and "00_bootstrap.min.css" in page and "cdn.jsdelivr" not in page
        status, css = get(url + "/assets/00_bootstrap.min.css")
        assert status == 200 and "Bootstrap  v5.3" in css
    finally:
        proc.terminate()
        proc.wait(10)
