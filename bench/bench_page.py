"""From navigation to the first drawn chart of a 200,000-step run, in headless Chromium: the
cockpit's Training tab next to the same charts as a static snapshot (the run's self-contained
HTML report, gui/report.py: plotly.js and the figures inlined, no server), on an idle machine and
with a CPU-bound process running beside it.

"First drawn chart" = the loss chart (cockpit) or the first chart (snapshot) holds plotted
points. Each figure is the median of BENCH_PAGE_REPEATS (default 3) fresh browser pages, after
one page that is timed apart: the first page after the cockpit started reads the run's rows from
its database, later pages find them cached (gui/services/series.py cached_train_series).
Targets: cockpit <= 1.5 s idle, <= 3 s beside the CPU hog. Needs Debian chromium and
Playwright (what the browser tests use); numbers, not pass/fail; run with nothing else on the
machine.
"""
from __future__ import annotations

import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.bench_gui import STEPS, write_run  # noqa: E402
from umoec.run import RunDir  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
DRAWN_JS = """(sel) => {const gd = document.querySelector(sel);
  return !!(gd && gd.data && gd.data.some(t => (t.x || []).length > 0));}"""
HOG = "while True:\n    pass\n"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _cockpit(runs: Path, log: Path) -> tuple[subprocess.Popen, str]:
    port = _free_port()
    with open(log, "w") as fh:
        proc = subprocess.Popen([sys.executable, "gui/app.py", "--runs-dir", str(runs), "--port",
                                 str(port)], cwd=ROOT, stdout=fh, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return proc, f"http://127.0.0.1:{port}"
        except OSError:
            if proc.poll() is not None:
                break
            time.sleep(0.2)
    proc.kill()
    raise SystemExit("the cockpit did not start: " + log.read_text())


def _time_to_chart(browser, url: str, selector: str, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        ctx = browser.new_context(viewport={"width": 1500, "height": 1100})
        page = ctx.new_page()
        t0 = time.perf_counter()
        page.goto(url)
        page.wait_for_function(DRAWN_JS, arg=selector, timeout=120_000, polling=50)
        times.append(time.perf_counter() - t0)
        ctx.close()
    return statistics.median(times)


def main() -> None:
    if not Path(CHROMIUM).exists():
        print(f"skipped: needs Debian chromium at {CHROMIUM}")
        return
    from playwright.sync_api import sync_playwright

    from gui.report import run_report
    repeats = int(os.environ.get("BENCH_PAGE_REPEATS", "3"))
    with tempfile.TemporaryDirectory(prefix="bench-page-") as t:
        runs = Path(t) / "runs"
        run = RunDir(runs / "big")
        write_run(run, STEPS)
        snapshot = Path(t) / "snapshot.html"
        snapshot.write_text(run_report(run), encoding="utf-8")
        proc, url = _cockpit(runs, Path(t) / "cockpit.log")
        rows = []
        try:
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                # the first page after start reads the run's rows (later pages find them cached)
                cold = _time_to_chart(browser, url, "#training-loss-graph .js-plotly-plot", 1)
                for label in ("idle", "beside a CPU hog"):
                    hog = (subprocess.Popen([sys.executable, "-c", HOG]) if label != "idle"
                           else None)
                    try:
                        snap = _time_to_chart(browser, snapshot.as_uri(), ".js-plotly-plot",
                                              repeats)
                        live = _time_to_chart(browser, url, "#training-loss-graph .js-plotly-plot",
                                              repeats)
                    finally:
                        if hog is not None:
                            hog.kill()
                            hog.wait()
                    rows.append((label, snap, live))
                browser.close()
        finally:
            proc.terminate()
            proc.wait(10)
    print(f"{STEPS:,}-step run, median of {repeats} page loads; navigation -> first drawn chart")
    print(f"{'machine':18s} {'static snapshot':>16s} {'cockpit':>9s} {'ratio':>7s} {'target':>8s}")
    for (label, snap, live), target in zip(rows, (1.5, 3.0), strict=True):
        print(f"{label:18s} {snap:15.2f}s {live:8.2f}s {live / snap:6.2f}x {target:7.1f}s")
    print(f"first page after the cockpit started (its rows not cached yet, idle): {cold:.2f}s")


if __name__ == "__main__":
    main()
