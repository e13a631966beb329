"""Security of the cockpit: who may connect, and where the processes it starts may write.

Already proven elsewhere (referenced in docs/reliability.md, not repeated): a non-loopback bind
without a token is refused and GET requests without the token get 401
(tests/gui/test_app_server.py); no shell anywhere (test_no_shell.py); upload names stay in the
sandbox and over-size uploads are refused (tests/gui/services/test_compress_jobs.py,
tests/gui/test_compression_tab.py); torch.load(weights_only=True) and a pickled callable refused
(test_no_shell.py, tests/umoec/train/test_checkpoint.py).

Added here: the default bind really is loopback only, the callback endpoint (which starts
processes) refuses requests without the token, every loopback test of the host, and hostile names
for the two folders the GUI chooses itself: the run folder the Launcher claims and the
compression output the JobManager claims, up to a real compression worker.
"""
from __future__ import annotations

import json
import re
import shutil
import socket
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from gui import app as cockpit
from gui.pages.compression.callbacks import do_action
from gui.services.compress_jobs import JobManager, JobRunner
from gui.services.launcher import Launcher, LaunchError
from gui.services.runs import resolve
from tests.gui.test_app_server import start_app
from tests.reliability.conftest import record
from tests.reliability.helpers import ONE_THREAD, tree
from umoec import config as C
from umoec.run import RunDir

SAFE = re.compile(r"[A-Za-z0-9._-]+")
HOSTILE_NAMES = ["../escape", "../../etc/cron.d/x", "/abs/path", "a/../../b", "..", ".", "",
                 "\x00", "nul\x00name", "x" * 300, "~root", "line\nbreak", "-rf", "--out=/tmp/x",
                 "$(touch pwned)", "`id`", "name with spaces", "..\\..\\win", "r\u00e9sum\u00e9",
                 "\u202eevil", ".hidden", "taken", "link"]


def post(url: str, body: dict, headers: dict | None = None) -> int:
    req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


def outside_address() -> str | None:
    """A non-loopback address of this machine, if it has one."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("10.254.254.254", 1))
            ip = s.getsockname()[0]
        except OSError:
            return None
    return None if ip.startswith("127.") else ip


# -- who may connect ------------------------------------------------------------------------------
@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.10", "example.org", "localhost.",
                                  "127.0.0.1.nip.io", "0177.0.0.1", " 127.0.0.1", ""])
def test_non_loopback_hosts_are_refused_without_a_token(tmp_path, host, capsys):
    assert cockpit.main(["--runs-dir", str(tmp_path), "--host", host]) == 2
    assert "without an access token" in capsys.readouterr().err


def test_loopback_hosts():
    assert all(cockpit.is_loopback(h) for h in ["127.0.0.1", "127.8.9.10", "::1", "localhost"])


@pytest.mark.slow
def test_default_bind_is_loopback_only_and_callbacks_need_the_token(tmp_path):
    proc, url = start_app(tmp_path)  # no --host: the default
    try:
        port = int(url.rsplit(":", 1)[1])
        ip = outside_address()
        if ip is not None:
            with pytest.raises(OSError):
                socket.create_connection((ip, port), timeout=2).close()
    finally:
        proc.terminate()
        proc.wait(10)
    proc, url = start_app(tmp_path, "--token", "s3cret")
    try:
        body = {"output": "x.children", "outputs": {"id": "x", "property": "children"},
                "inputs": [], "changedPropIds": []}
        assert post(url + "/_dash-update-component", body) == 401
        assert post(url + "/_dash-update-component", body, {"Authorization": "Bearer wrong"}) == 401
        assert post(url + "/_dash-update-component", body, {"Cookie": "umoec_token=wrong"}) == 401
        assert post(url + "/_dash-update-component?token=", body) == 401
        with urllib.request.urlopen(url + "/?token=s3cret", timeout=10) as r:
            cookie = r.headers["Set-Cookie"]
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
        assert post(url + "/_dash-update-component", body,
                    {"Cookie": cookie.split(";")[0]}) != 401
    finally:
        proc.terminate()
        proc.wait(10)


# -- the run folder the Launcher claims -----------------------------------------------------------
def fake_python(tmp_path: Path) -> str:
    exe = tmp_path / "fake-python"
    exe.write_text("#!/bin/sh\nexit 0\n")
    exe.chmod(0o755)
    return str(exe)


def test_launcher_run_folders_stay_inside_the_runs_folder(tmp_path):
    runs, outside = tmp_path / "runs", tmp_path / "outside"
    runs.mkdir()
    outside.mkdir()
    (runs / "link").symlink_to(outside)
    taken = RunDir(runs / "taken")
    taken.root.mkdir()
    taken.config_path.write_text("tier: tier1_micro\n")
    before_outside, before_taken = tree(outside), tree(taken.root)
    launcher = Launcher(runs, python=fake_python(tmp_path))
    cfg = C.load_preset("tier1_micro", ["training.steps=100000"])
    claimed = []
    for name in HOSTILE_NAMES:
        launched = launcher.start(cfg, "simulate", name)
        assert launched.done.wait(10)
        folder = launched.run_dir
        assert folder.parent == runs and folder.is_dir() and not folder.is_symlink(), name
        assert SAFE.fullmatch(folder.name) and not folder.name.startswith((".", "-")), folder.name
        assert folder.name not in ("taken", "link") and folder not in claimed
        assert launched.argv[launched.argv.index("--out") + 1] == str(folder)
        claimed.append(folder)
    assert tree(outside) == before_outside and tree(taken.root) == before_taken
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fake-python", "outside", "runs"]
    record("gui_run_names", {"names_tried": len(HOSTILE_NAMES), "all_inside": True})


def test_resume_and_run_selection_refuse_paths(tmp_path):
    runs = tmp_path / "runs"
    run = RunDir(runs / "r")
    run.checkpoints_dir.mkdir(parents=True)
    run.config_path.write_text("tier: tier1_micro\n")
    (run.checkpoints_dir / "step000004.pt").write_bytes(b"x")
    (tmp_path / "evil.pt").write_bytes(b"x")
    launcher = Launcher(runs, python=fake_python(tmp_path))
    for ck in ["../../evil.pt", str(tmp_path / "evil.pt"), "step000004.pt/../../../evil.pt",
               "../r/checkpoints/step000004.pt", "\x00", "step000004.pt\x00.x"]:
        with pytest.raises(LaunchError, match="not in"):
            launcher.resume(run, ck)
    assert launcher.get("r") is None  # nothing was started
    for name in ["../r", "/abs", "r/..", "..", ".", "r/../r", "", None, "r\\..\\r"]:
        assert resolve(runs, name) is None, name
    assert resolve(runs, "r").root == runs / "r"


# -- the compression output the JobManager claims -------------------------------------------------
class RecordingRunner(JobRunner):
    """Starts no worker: records its argv, creates the output as a worker would, ends in success."""

    def __init__(self):
        super().__init__()
        self.argvs = []

    def start(self, job, on_finish):
        self.argvs.append(job.argv)
        out = Path(job.argv[job.argv.index("--output") + 1])
        out.parent.mkdir(exist_ok=True)
        out.write_bytes(b"umc")
        job.result = {"raw_bytes": 1, "packed_bytes": 1, "seconds": 0.0}
        job.state, job.message, job.ended = "done", "done", time.time()
        on_finish(job)
        job.finished.set()
        return job


INPUT_NAMES = ["-rf", "--output=x", "$(touch pwned).txt", "a\nb.txt", "x" * 250, ".hidden",
               "..\\..\\win.txt", "\u202etxt.exe", "r\u00e9sum\u00e9.pdf", "...", "-", "a b;c|d&e"]


def test_compression_outputs_stay_in_the_run_folder(tmp_path, tiny_run):
    runs = tmp_path / "runs"
    runs.mkdir()
    run = RunDir(runs / "tiny")
    run.root.mkdir()
    (run.checkpoints_dir).mkdir()
    for name in ("config.yaml", "status.json", "metrics.db"):
        (run.root / name).write_bytes((tiny_run / name).read_bytes())
    (run.checkpoints_dir / "step000004.pt").write_bytes(b"x")
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    runner = RecordingRunner()
    jobs = JobManager(runs, runner=runner)
    texts = []
    for name in INPUT_NAMES:
        (inputs / name).write_bytes(b"data")
        texts.append(str(inputs / name))
    texts += ["../" * 12 + "etc/hostname", "~/../../etc/hostname"]
    for text in texts:
        job = jobs.start_compress(run, text, "turbo", "step000004.pt")
        assert job.state == "done", job.message
    compressed = run.compressed_dir.resolve()
    for argv in runner.argvs:
        assert argv[:5] == [sys.executable, "-m", "umoec.compress.worker", "compress", "--input"]
        assert argv[6::2] == ["--output", "--checkpoint", "--profile"]
        src, out, ck = Path(argv[5]), Path(argv[7]), Path(argv[9])
        assert src.is_absolute() and ck == run.checkpoints_dir / "step000004.pt"
        assert out.parent == run.compressed_dir and out.resolve().parent == compressed
        assert out.suffix == ".umc" and "\n" not in out.name and not out.name.startswith(("-", "."))
        assert SAFE.fullmatch(out.name), out.name
    assert len({a[7] for a in runner.argvs}) == len(runner.argvs)  # never the same output
    # a NUL in the typed path: refused with a message, no row, no exception out of the callback
    msg = do_action(jobs, runs, "compress-btn", "in\x00put", "turbo", "step000004.pt", "tiny", None)
    assert msg["text"] and msg["colour"] in ("warning", "danger")
    record("gui_compress_outputs", {"names_tried": len(texts), "all_inside": True,
                                    "nul_path_message": msg["text"]})


@pytest.mark.slow
def test_a_real_compression_of_a_hostile_name_writes_only_its_output(tmp_path, tiny_run,
                                                                     monkeypatch):
    for key, value in ONE_THREAD.items():
        monkeypatch.setenv(key, value)
    runs = tmp_path / "runs"
    runs.mkdir()
    shutil.copytree(tiny_run, runs / "tiny")
    run = RunDir(runs / "tiny")
    src = tmp_path / "-rf $(touch pwned);\n..\\x.txt"
    src.write_bytes(b"hello hostile world\n" * 20)
    before = tree(tmp_path)
    jobs = JobManager(runs, timeout=300)
    job = jobs.start_compress(run, str(src), "fast", "step000008.pt")
    assert job.finished.wait(300) and job.state == "done", job.message
    after = tree(tmp_path)
    new = sorted(set(after) - set(before))
    changed = sorted(p for p in set(before) & set(after) if before[p] != after[p])
    export = "runs/tiny/models/step000008.umm"     # the checkpoint's coding model, by design
    assert all(p.startswith(f"runs/tiny/{run.compressed_dir.name}/") or p == export for p in new), new
    assert [p for p in new if p.endswith(".umc")] and len(set(new) - {export}) == 2  # +job json
    assert set(changed) <= {"runs/tiny/metrics.db", "runs/tiny/metrics.db-wal",
                            "runs/tiny/metrics.db-shm"}, changed
    assert not (tmp_path / "pwned").exists() and not Path("pwned").exists()
    record("gui_real_compression", {"input": src.name, "outputs": new})
