"""The cockpit in headless Chromium: the training view renders real data and updates live."""
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gui import ids as common
from gui.pages.training import ids
from tests.conftest import ARTIFACTS, ROOT
from tests.gui.browser_util import SHOWN_PANE_HAS_TEXT, TIMEOUT_MS
from tests.gui.test_app_server import start_app

pytestmark = pytest.mark.browser


@pytest.fixture
def page(browser):
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    pg = ctx.new_page()
    pg.set_default_timeout(TIMEOUT_MS)
    pg.console_errors = []
    pg.on("console", lambda m: pg.console_errors.append(m.text) if m.type == "error" else None)
    pg.on("pageerror", lambda e: pg.console_errors.append(str(e)))
    yield pg
    ctx.close()


def shot(page, name):
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def test_completed_run_renders_kpis_charts_and_logs(page, sim_run, tmp_path):
    shutil.copytree(sim_run, tmp_path / "sim600")
    proc, url = start_app(tmp_path, "--refresh-ms", "1000")
    try:
        page.goto(url)
        page.wait_for_selector("#training-kpi-cards >> text=600", timeout=TIMEOUT_MS)
        assert page.inner_text("#run-status") == "Completed (600 steps)"
        page.wait_for_selector("#training-loss-graph .main-svg", timeout=TIMEOUT_MS)
        assert "step    600 | loss" in page.inner_text("#training-log-tail")
        # the log box opens at its newest lines (the last line is inside the visible box)
        gap = page.eval_on_selector("#training-log-tail", """e => {
            const box = e.parentElement.getBoundingClientRect();
            return e.getBoundingClientRect().bottom - box.bottom; }""")
        assert gap <= 1, gap
        assert "step000600.pt" in page.inner_text("#checkpoint-list")
        assert "exit_1" in page.inner_text("#training-head-losses")
        # the smoothing method: the legend names it; "none" greys the slider out
        legend = "#training-loss-graph .legendtext"
        page.wait_for_selector(f"{legend} >> text='train bpb (EMA 0.60)'", timeout=TIMEOUT_MS)
        method = page.locator(f"#{ids.TRAINING_SMOOTH_METHOD}")
        method.get_by_text("running mean", exact=True).click()
        page.wait_for_selector(f"{legend} >> text='train bpb (mean of 3)'", timeout=TIMEOUT_MS)
        page.locator(f"label[for='{ids.TRAINING_CLIP}']").click()
        page.wait_for_selector(f"{legend} >> text='train bpb (mean of 3, clipped)'", timeout=TIMEOUT_MS)
        method.get_by_text("none", exact=True).click()
        page.wait_for_selector(f"{legend} >> text='train bpb (unsmoothed, clipped)'", timeout=TIMEOUT_MS)
        page.wait_for_selector(f"#{ids.TRAINING_SMOOTHING} [aria-disabled='true']", timeout=TIMEOUT_MS)
        # tokens/s: one point per logged step (every 10th), drawn with the other charts
        tokens = page.evaluate(f"""() => document.querySelector(
            '#{ids.TRAINING_THROUGHPUT} .js-plotly-plot').data[0]""")
        assert tokens["name"] == "tokens/s" and tokens["x"] == list(range(10, 601, 10))
        assert min(tokens["y"]) > 0
        # Bootstrap comes from the local asset: the navbar is styled (dark background).
        bg = page.eval_on_selector("nav", "e => getComputedStyle(e).backgroundColor")
        assert bg not in ("rgba(0, 0, 0, 0)", "transparent")
        shot(page, "training_completed")
        with page.expect_download(timeout=TIMEOUT_MS) as download:   # the run's metrics as CSV
            page.click("#training-csv-btn")
        assert download.value.suggested_filename == "sim600-metrics.csv"
        lines = Path(download.value.path()).read_text().splitlines()
        assert lines[0].startswith("step,") and lines[-1].startswith("600,")  # every logged row
        with page.expect_download(timeout=TIMEOUT_MS) as download:   # the run as one HTML file
            page.click("#training-report-btn")
        assert download.value.suggested_filename == "sim600-report.html"
        report = Path(download.value.path()).read_text(encoding="utf-8")
        assert "<h2>System</h2>" in report and "/* plotly.js " in report and len(report) > 1e6
        assert page.console_errors == []
    finally:
        proc.terminate()
        proc.wait(10)


def test_an_idle_page_costs_at_most_one_request_a_second(page, sim_run, tmp_path):
    """A finished run on screen, default refresh (2 s): each tick is one pulse answered "no
    update"; the page's callbacks run again only when something changed (or every 30 s)."""
    shutil.copytree(sim_run, tmp_path / "sim600")
    proc, url = start_app(tmp_path)
    requests = []
    page.on("request", lambda r: requests.append(r.post_data or "")
            if "_dash-update-component" in r.url else None)
    try:
        page.goto(url)
        page.wait_for_selector("#training-kpi-cards >> text=600", timeout=TIMEOUT_MS)
        page.wait_for_timeout(3000)  # start-up settles
        del requests[:]
        page.wait_for_timeout(20_000)
        pulses = sum('"output":"refresh-pulse.data"' in body for body in requests)
        assert 8 <= pulses <= 11, pulses
        assert len(requests) <= 20, [body[:80] for body in requests]
        assert page.inner_text("#run-status") == "Completed (600 steps)"
    finally:
        proc.terminate()
        proc.wait(10)


def test_a_page_load_draws_the_training_tab_once(page, sim_run, tmp_path):
    """The page is served with its run list and pulse: the Training tab's charts are asked for
    once, in the page's first callback requests (no pulse, no run-list request before them;
    they used to wait for a pulse, then the run list, then their answers), and again only when
    a later pulse changes (e.g. the 30 s safety refresh)."""
    import json
    shutil.copytree(sim_run, tmp_path / "sim600")
    proc, url = start_app(tmp_path)
    sent, draws, pulses = [], [], []

    def request(r):
        if "_dash-update-component" in r.url:
            sent.append(json.loads(r.post_data or "{}").get("output", ""))

    def seen(r):
        body = r.request.post_data or ""
        if "_dash-update-component" not in r.url:
            return
        if '"output":"..training-kpi-cards.children' in body:
            draws.append(json.loads(body).get("inputs"))
        elif '"output":"refresh-pulse.data"' in body and r.status == 200:
            pulses.append(json.loads(r.text())["response"]["refresh-pulse"]["data"])
    page.on("request", request)
    page.on("response", seen)
    try:
        page.goto(url)
        page.wait_for_selector("#training-kpi-cards >> text=600", timeout=TIMEOUT_MS)
        page.wait_for_timeout(5000)  # two more pulses
        first = next(i for i, out in enumerate(sent) if out.startswith("..training-kpi-cards"))
        assert not any(out in ("refresh-pulse.data", "run-select.options") for out in sent[:first]), \
            sent[:first + 1]
        run = [i["value"] for i in draws[0] if i["id"] == common.RUN_SELECT]
        assert run == ["sim600"], draws[0]                  # the served list's run, picked in the page
        # a changed pulse (the 30 s bucket) may have its draw still on the way: wait for it
        for _ in range(50):
            changes = sum(1 for p in pulses if not p["quiet"])
            if len(draws) >= 1 + changes:
                break
            page.wait_for_timeout(200)
        assert len(draws) == 1 + changes, (sent, pulses)
        assert page.console_errors == []
    finally:
        proc.terminate()
        proc.wait(10)


SELECTED_JS = "(n) => { const e = document.querySelector('#run-select'); const t = e ? e.innerText : '';"


def test_a_reload_shows_the_run_picked_before_it(page, sim_run, tmp_path):
    """The page lists the runs as served and shows the first; a run the user picked is
    remembered by the browser and shown again after a reload (the served list does not
    override it), and a run that is gone falls back to the first."""
    for name in ("alpha", "beta"):
        shutil.copytree(sim_run, tmp_path / name)
    proc, url = start_app(tmp_path)
    try:
        page.goto(url)
        page.wait_for_selector("#training-kpi-cards >> text=600", timeout=TIMEOUT_MS)
        shown = page.inner_text("#run-select")
        other = "beta" if "alpha" in shown else "alpha"
        page.locator("#run-select").click()
        page.locator(f".dash-dropdown-option:has(input[value='{other}'])").click()
        page.keyboard.press("Escape")
        page.wait_for_function(SELECTED_JS + " return t.includes(n); }", arg=other)
        page.reload()
        page.wait_for_selector("#training-kpi-cards >> text=600", timeout=TIMEOUT_MS)
        page.wait_for_timeout(1000)
        assert other in page.inner_text("#run-select")
        shutil.rmtree(tmp_path / other)
        page.reload()
        page.wait_for_function(SELECTED_JS + " return t.length > 0 && !t.includes(n); }", arg=other)
        page.wait_for_selector("#training-kpi-cards >> text=600", timeout=TIMEOUT_MS)
        assert page.console_errors == []
    finally:
        proc.terminate()
        proc.wait(10)


def test_empty_runs_folder_explains_what_to_do(page, tmp_path):
    proc, url = start_app(tmp_path, "--refresh-ms", "1000")
    try:
        page.goto(url)
        page.wait_for_selector("text=No run selected. Create one with", timeout=TIMEOUT_MS)
        shot(page, "training_empty")
        assert "No run selected. Press Start" in page.inner_text("#config-status")
        for tab in ("Architecture", "Routing", "MoD", "Activations", "Brain", "Compression",
                    "Evaluation", "Growth"):  # every tab has an empty state, not a blank page
            page.get_by_role("tab", name=tab, exact=True).click()
            page.wait_for_function(SHOWN_PANE_HAS_TEXT, timeout=TIMEOUT_MS)   # built on first show
            page.wait_for_timeout(700)
            assert page.locator(".cockpit-pane:not(.d-none)").inner_text().strip(), tab
        assert page.console_errors == []
    finally:
        proc.terminate()
        proc.wait(10)


def test_live_run_updates_then_shows_stopped(page, tmp_path):
    sim = subprocess.Popen([sys.executable, "-m", "bin.simulate_training", "--out",
                            str(tmp_path / "live"), "--steps", "100000", "--live", "--rate", "20",
                            "--quiet"], cwd=ROOT)
    proc, url = start_app(tmp_path, "--refresh-ms", "500")
    try:
        page.goto(url)
        page.wait_for_selector("#run-status >> text=Running", timeout=TIMEOUT_MS)
        first = page.inner_text("#training-kpi-cards")
        deadline = time.monotonic() + 30
        while page.inner_text("#training-kpi-cards") == first and time.monotonic() < deadline:
            time.sleep(0.3)
        assert page.inner_text("#training-kpi-cards") != first  # live refresh
        assert "ETA" in page.inner_text("#training-eta")
        sim.send_signal(signal.SIGTERM)
        assert sim.wait(30) == 0
        page.wait_for_selector("#run-status >> text=Stopped", timeout=TIMEOUT_MS)
        shot(page, "training_stopped")
        assert page.console_errors == []
    finally:
        if sim.poll() is None:
            sim.kill()
        proc.terminate()
        proc.wait(10)


def test_killed_run_shows_crashed(page, tmp_path):
    sim = subprocess.Popen([sys.executable, "-m", "bin.simulate_training", "--out",
                            str(tmp_path / "doomed"), "--steps", "100000", "--live", "--rate",
                            "20", "--quiet"], cwd=ROOT)
    proc, url = start_app(tmp_path, "--refresh-ms", "500")
    try:
        page.goto(url)
        page.wait_for_selector("#run-status >> text=Running", timeout=TIMEOUT_MS)
        sim.kill()
        sim.wait(10)
        page.wait_for_selector("#run-status >> text=Crashed", timeout=TIMEOUT_MS)
        assert "is gone without a final status" in page.inner_text("#run-status")
    finally:
        proc.terminate()
        proc.wait(10)


def test_long_statuses_and_notes_fit_a_1600px_window(page, tmp_path):
    """Runs table: long names, crash messages and notes wrap in their columns (steps and
    updated stay in view); the header badge is cut, not the page widened; toasts sit low."""
    from umoec.run import RunDir, RunStatus
    run = RunDir(tmp_path / "crashed-run-with-a-long-name-2026-12-02")
    run.root.mkdir()
    RunStatus(state="crashed", exit_code=1, step=1234, total_steps=5000,
              message="RuntimeError: loss is NaN at step 1234 after the learning rate warmup; "
                      "see training.log for the last 100 lines").write(run.status_path)
    (run.root / "notes.md").write_text("a bigger learning rate with muon and a longer warmup " * 3)
    page.set_viewport_size({"width": 1600, "height": 1000})
    proc, url = start_app(tmp_path)
    try:
        page.goto(url)
        page.wait_for_selector("#run-status >> text=Crashed", timeout=TIMEOUT_MS)
        page.get_by_role("tab", name="Runs", exact=True).click()
        page.wait_for_selector("#runs-table >> text=2026-12-02", timeout=TIMEOUT_MS)
        widths = page.evaluate("""() => {
            const t = document.querySelector('#runs-table .dash-spreadsheet-container');
            return [t.scrollWidth, t.clientWidth, document.documentElement.scrollWidth];
        }""")
        assert widths[0] <= widths[1] + 1 and widths[2] <= 1600, widths
        tabs = page.locator("#main-tabs").bounding_box()
        toasts = page.locator("#notify-toasts").bounding_box()
        assert toasts is None or toasts["y"] > tabs["y"] + tabs["height"] + 300
        assert page.console_errors == []
    finally:
        proc.terminate()
        proc.wait(10)


def test_a_checkpoint_marker_click_selects_it_in_every_picker(page, sim_run, tmp_path):
    """Click step 500's marker on the loss chart: the resume picker and, once their tabs are
    opened, the Compression and Evaluation tabs' pickers show step 500 (the newest, 600, is
    what they show otherwise); a manual pick afterwards stays."""
    from tests.gui.browser_util import wait_text
    shutil.copytree(sim_run, tmp_path / "sim600")
    proc, url = start_app(tmp_path, "--refresh-ms", "1000")
    graph = f"#{ids.TRAINING_LOSS} .js-plotly-plot"
    try:
        page.goto(url)
        page.wait_for_selector("#training-kpi-cards >> text=600", timeout=TIMEOUT_MS)
        page.wait_for_function(f"""() => {{ const gd = document.querySelector('{graph}');
            return gd && gd.data && gd.data.length === 5 && gd.data[4].x.join() === '500,600'; }}""",
                               timeout=TIMEOUT_MS)
        wait_text(page, f"#{common.RESUME_CHECKPOINT}", "step 600")
        # the marker's place on the page, from the chart's own axes
        x, y = page.evaluate(f"""() => {{ const gd = document.querySelector('{graph}');
            const box = gd.getBoundingClientRect(), L = gd._fullLayout;
            return [box.left + L.xaxis._offset + L.xaxis.l2p(500),
                    box.top + L.yaxis2._offset + L.yaxis2.l2p(0.5)]; }}""")
        page.mouse.move(x - 20, y)
        page.mouse.move(x, y)
        page.mouse.click(x, y)
        wait_text(page, f"#{ids.TRAINING_CHECKPOINT_NOTE}",
                  "step 500 checkpoint selected for resume, compression, evaluation and generation")
        wait_text(page, f"#{common.RESUME_CHECKPOINT}", "step 500")
        shot(page, "training_checkpoint_selected")
        page.get_by_role("tab", name="Compression", exact=True).click()
        wait_text(page, f"#{common.COMPRESS_CHECKPOINT}", "step 500")
        page.get_by_role("tab", name="Evaluation", exact=True).click()
        wait_text(page, f"#{common.EVAL_CHECKPOINT}", "step 500")
        # a pick made afterwards wins over the selection when the tab is opened again
        page.get_by_role("tab", name="Training", exact=True).click()
        page.click(f"#{common.RESUME_CHECKPOINT}")
        page.get_by_role("option", name="step 600", exact=False).click()
        wait_text(page, f"#{common.RESUME_CHECKPOINT}", "step 600")
        page.get_by_role("tab", name="Compression", exact=True).click()
        page.wait_for_timeout(1000)
        assert "step 500" in page.inner_text(f"#{common.COMPRESS_CHECKPOINT}")
        page.get_by_role("tab", name="Training", exact=True).click()
        page.wait_for_timeout(2500)  # the tab's refresh and a tick or two
        assert "step 600" in page.inner_text(f"#{common.RESUME_CHECKPOINT}")
        assert page.console_errors == []
    finally:
        proc.terminate()
        proc.wait(10)


XRANGE_JS = """(id) => {const gd = document.querySelector('#' + id + ' .js-plotly-plot');
  if (!gd || !gd.layout || !gd.layout.xaxis) return null;
  return {auto: gd.layout.xaxis.autorange === true, range: (gd.layout.xaxis.range || []).map(Number)};}"""


def test_the_training_charts_share_their_x_axis(page, sim_run, tmp_path):
    """A zoom on any of the step charts is applied to the others; a double-click fits them all."""
    shutil.copytree(sim_run, tmp_path / "sim600")
    proc, url = start_app(tmp_path, "--refresh-ms", "1000")
    charts = ("training-loss-graph", "training-lr-graph", "training-throughput-graph")

    def ranges_become(lo, hi, ids):
        for cid in ids:
            page.wait_for_function(
                f"(() => {{const r = ({XRANGE_JS})('{cid}'); return r && !r.auto && "
                f"Math.abs(r.range[0] - {lo}) < 1e-6 && Math.abs(r.range[1] - {hi}) < 1e-6;}})()",
                timeout=TIMEOUT_MS)

    def relayout(cid, update):
        page.evaluate("([id, u]) => window.Plotly.relayout("
                      "document.querySelector('#' + id + ' .js-plotly-plot'), u)", [cid, update])
    try:
        page.goto(url)
        page.wait_for_selector("#training-kpi-cards >> text=600", timeout=TIMEOUT_MS)
        for cid in charts:
            page.wait_for_selector(f"#{cid} .main-svg", timeout=TIMEOUT_MS)
        relayout("training-loss-graph", {"xaxis.range": [100, 200]})
        ranges_become(100, 200, charts[1:])
        relayout("training-lr-graph", {"xaxis.range[0]": 300, "xaxis.range[1]": 420})
        ranges_become(300, 420, (charts[0], charts[2]))
        assert not page.is_checked("#training-follow")     # a zoom made on another chart counts
        # the double-click comes after the server has answered the zoom (as a user's would): on
        # a slow machine that answer could otherwise land after it and re-zoom the loss chart
        page.wait_for_timeout(500)
        page.wait_for_function("document.querySelector('#training-loss-graph')"
                               ".getAttribute('data-dash-is-loading') !== 'true'", timeout=TIMEOUT_MS)
        relayout("training-throughput-graph", {"xaxis.autorange": True})
        for cid in charts[:2]:
            page.wait_for_function(f"(({XRANGE_JS})('{cid}') || {{}}).auto === true", timeout=TIMEOUT_MS)
        shot(page, "training_shared_x")
        assert page.console_errors == []
    finally:
        proc.terminate()
        proc.wait(10)
