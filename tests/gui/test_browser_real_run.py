"""The W&B-style features on runs the real trainer made (bin.train, not the simulator): system
metrics sampled by the trainer drawn on the Training tab and written into the HTML report, and a
tag from the run's notes listed and found by the Runs table's filter row."""
import sqlite3
from pathlib import Path

import pytest

from tests.gui.browser_util import TIMEOUT_MS, new_page, shot, wait_text
from tests.gui.playground_support import STEPS, copy_run
from tests.gui.test_app_server import start_app

pytestmark = pytest.mark.browser

SYSTEM_JS = """() => {const gd = document.querySelector('#training-system-graph .js-plotly-plot');
  if (!gd || !gd.data) return null;
  return gd.data.map(t => ({name: t.name, n: (t.y || []).filter(v => v !== null).length}));}"""


@pytest.fixture(scope="module")
def cockpit(tmp_path_factory):
    runs = tmp_path_factory.mktemp("real") / "runs"
    for name in ("real-a", "real-b"):
        copy_run(runs / name)
    proc, url = start_app(runs, "--refresh-ms", "1000")
    yield {"url": url, "runs": runs}
    proc.terminate()
    proc.wait(10)


def test_the_trainer_sampled_system_metrics(cockpit):
    with sqlite3.connect(cockpit["runs"] / "real-a" / "metrics.db") as conn:
        rows = conn.execute("SELECT COUNT(*), MAX(rss_bytes) FROM system_metrics").fetchone()
    assert rows[0] >= 1 and rows[1] > 50 << 20    # a Python process with torch: > 50 MiB resident


def test_system_chart_report_and_tags_on_real_runs(browser, cockpit):
    ctx, page = new_page(browser)
    try:
        page.goto(cockpit["url"])
        page.wait_for_selector("#run-select", timeout=TIMEOUT_MS)
        page.locator("#run-select").click()
        page.locator(".dash-dropdown-option:has(input[value='real-a'])").click()
        page.keyboard.press("Escape")
        wait_text(page, "#run-status", f"Completed ({STEPS} steps)", 60_000)
        page.wait_for_function(f"({SYSTEM_JS})() && ({SYSTEM_JS})().some(t => t.n > 0)",
                               timeout=TIMEOUT_MS)
        traces = page.evaluate(SYSTEM_JS)
        assert any(t["name"].startswith("CPU") and t["n"] > 0 for t in traces), traces
        shot(page, "real_run_system")
        with page.expect_download(timeout=TIMEOUT_MS) as download:
            page.click("#training-report-btn")
        assert download.value.suggested_filename == "real-a-report.html"
        report = Path(download.value.path()).read_text(encoding="utf-8")
        assert "<h2>System</h2>" in report and "real-a" in report
        assert "memory (MB, resident)" in report      # the system chart's RSS trace

        page.get_by_role("tab", name="Runs", exact=True).click()
        page.locator("#runs-table td:has-text('real-a')").first.click()
        wait_text(page, "#runs-selected", "real-a")
        page.fill("#runs-notes", "trained for real #smoke")
        page.click("#runs-notes-save-btn")
        wait_text(page, "#runs-message", "Saved notes of real-a")
        wait_text(page, "#runs-table", "#smoke")
        box = page.locator("#runs-table th.dash-filter[data-dash-column='tags'] input").first
        box.fill("smoke")
        box.press("Enter")
        page.wait_for_function(
            "document.querySelectorAll('#runs-table tr td.dash-cell.column-0').length === 1",
            timeout=TIMEOUT_MS)
        shown = page.inner_text("#runs-table tbody")
        assert "real-a" in shown and "real-b" not in shown
        shot(page, "real_run_tag_filter")
        assert page.console_errors == []
    finally:
        ctx.close()
