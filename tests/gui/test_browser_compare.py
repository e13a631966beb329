"""In headless Chromium, one cockpit for the module: Compare (pick runs, legend of differing keys
only, axis switch, zoom, CSV, the System chart and its metric selector), presets (save, select),
run management (notes, rename, delete with its dialog) and Forge runs (listed, opened by path,
shown read-only)."""
import shutil
import time
from pathlib import Path

import pytest

from tests.gui.browser_util import TIMEOUT_MS, new_page, open_section, shot, wait_text
from tests.gui.forge_fixtures import write_forge_run
from tests.gui.services.test_compare import add_system_rows, make_run
from tests.gui.test_app_server import start_app

pytestmark = pytest.mark.browser

GRAPH_JS = """() => {const gd = document.querySelector('#compare-graph .js-plotly-plot');
  if (!gd || !gd.data || !gd.data.length) return null;
  return {traces: gd.data.length, x2: gd.layout.xaxis2.title.text, range: gd.layout.xaxis.range,
          auto: !!gd.layout.xaxis.autorange,
          legend: [...document.querySelectorAll('#compare-graph .legendtext')].map(e => e.textContent),
          colours: Object.fromEntries(gd.data.filter(t => t.showlegend !== false)
                                             .map(t => [t.name, t.line.color]))};}"""
SYSTEM_JS = """() => {const gd = document.querySelector('#compare-system-graph .js-plotly-plot');
  if (!gd || !gd.data || !gd.data.length) return null;
  return {names: gd.data.map(t => t.name), colours: gd.data.map(t => t.line.color),
          y: gd.layout.yaxis.title.text};}"""


@pytest.fixture(scope="module")
def cockpit(sim_run, tmp_path_factory):
    root = tmp_path_factory.mktemp("partA")
    runs = root / "runs"
    shutil.copytree(sim_run, runs / "base")
    make_run(runs, "fast", ["optimizer.adamw.lr=0.001", "training.steps=600"], steps=range(10, 601, 10))
    make_run(runs, "victim")
    # "base" (simulated) has the samples the recorder takes; this one adds GPU columns
    add_system_rows(make_run(runs, "sys-gpu", ["optimizer.adamw.lr=0.002"], steps=range(10, 601, 10)),
                    range(10, 601, 10), gpu=True)
    write_forge_run(runs / "forge-a", steps=400, resume_from=250, resume_upto=320)
    outside = write_forge_run(root / "elsewhere" / "forge-out", steps=200, columns=6)
    proc, url = start_app(runs, "--refresh-ms", "1000", "--presets-dir", str(root / "presets"))
    yield {"url": url, "runs": runs, "presets": root / "presets", "outside": outside}
    proc.terminate()
    proc.wait(10)


@pytest.fixture(scope="module")
def page(browser, cockpit):
    """One page for the module (a cockpit page load is the slow part); tests go by tab."""
    ctx, pg = new_page(browser)
    pg.goto(cockpit["url"])
    pg.wait_for_selector("#config-derived >> text=parameters", timeout=TIMEOUT_MS)
    yield pg
    ctx.close()


def graph(page, pred, timeout_s=TIMEOUT_MS / 1000, js=GRAPH_JS):
    deadline = time.monotonic() + timeout_s
    last = None
    while time.monotonic() < deadline:
        last = page.evaluate(js)
        if last and pred(last):
            return last
        page.wait_for_timeout(200)
    raise AssertionError(f"compare chart never got there; last: {last}")


def system_range(page, want, timeout_s: float = 20) -> None:
    """Wait until the System chart's x axis shows `want` ([lo, hi] rounded; None: autorange)."""
    js = ("() => { const gd = document.querySelector('#compare-system-graph .js-plotly-plot');"
          " if (!gd || !gd.layout || !gd.layout.xaxis) return null;"
          " const ax = gd.layout.xaxis; return {auto: ax.autorange === true, range: ax.range}; }")
    deadline = time.monotonic() + timeout_s
    last = None
    while time.monotonic() < deadline:
        last = page.evaluate(js)
        if last and (last["auto"] if want is None else
                     not last["auto"] and [round(v) for v in last["range"]] == want):
            return
        page.wait_for_timeout(200)
    raise AssertionError(f"System chart x axis never showed {want}; last: {last}")


def clear_runs(page) -> None:
    clear = page.locator("#compare-runs .dash-dropdown-clear")
    if clear.count():
        clear.click()


def pick(page, dropdown: str, *values: str) -> None:
    page.locator(f"#{dropdown}").click()
    for v in values:
        page.locator(f".dash-dropdown-option:has(input[value='{v}'])").click()
    page.keyboard.press("Escape")


def test_compare_runs_axis_zoom_and_csv(page, cockpit):
    page.get_by_role("tab", name="Compare", exact=True).click()
    pick(page, "compare-runs", "base", "fast", "forge-a")
    g = graph(page, lambda g: g["traces"] >= 12)
    # the legend names only what differs between our two runs (their lr), nothing else
    assert g["legend"] == ["base: lr=0.003", "fast: lr=0.001", "forge-a (Forge, read-only) (bits/token)"]
    table = wait_text(page, "#compare-table", "forge-a (Forge, read-only)")
    assert "optimizer.adamw.lr" in table and "bits/token" in table
    page.get_by_label("training bytes").check()
    graph(page, lambda g: g["x2"] == "training bytes")
    wait_text(page, "#compare-message", "tokens, estimated")
    page.get_by_label("step", exact=True).check()
    graph(page, lambda g: g["x2"] == "step")
    # a zoom re-aggregates the visible range and stops following the live edge
    page.evaluate("() => Plotly.relayout(document.querySelector('#compare-graph .js-plotly-plot'), "
                  "{'xaxis.range[0]': 100, 'xaxis.range[1]': 300})")
    graph(page, lambda g: not g["auto"] and [round(v) for v in g["range"]] == [100, 300])
    wait_text(page, "#compare-message", "drawn from every row")
    assert not page.is_checked("#compare-follow")
    system_range(page, [100, 300])                    # the System chart shows the same window
    shot(page, "compare_zoomed")
    # a zoom on the System chart zooms both
    page.evaluate("() => Plotly.relayout(document.querySelector('#compare-system-graph .js-plotly-plot'), "
                  "{'xaxis.range[0]': 150, 'xaxis.range[1]': 250})")
    graph(page, lambda g: not g["auto"] and [round(v) for v in g["range"]] == [150, 250])
    page.locator("label[for='compare-follow']").click()
    graph(page, lambda g: g["auto"])
    system_range(page, None)                          # and back to the whole runs with it
    with page.expect_download() as download:
        page.click("#compare-csv-btn")
    text = Path(download.value.path()).read_text()
    assert text.splitlines()[0].startswith("run,kind,status,steps,training bytes")
    assert len(text.splitlines()) == 4 and "forge-a (Forge, read-only)" in text
    assert page.console_errors == []


def test_compare_system_chart_overlays_runs_and_switches_metric(page, cockpit):
    page.get_by_role("tab", name="Compare", exact=True).click()
    clear_runs(page)       # the module shares one page: start from no runs picked
    pick(page, "compare-runs", "base", "sys-gpu")
    loss = graph(page, lambda g: len(g["legend"]) == 2)
    system = graph(page, lambda g: len(g["names"]) == 2, js=SYSTEM_JS)
    # one line per run, named and coloured as in the loss chart
    assert system["names"] == loss["legend"]
    assert system["colours"] == [loss["colours"][n] for n in system["names"]]
    assert system["y"] == "CPU (% of one core)"
    assert "GPU memory MiB" in page.inner_text("#compare-system-metric")   # sys-gpu has GPU samples
    page.get_by_label("RSS MiB").check()
    system = graph(page, lambda g: g["y"] == "resident memory (MiB)", js=SYSTEM_JS)
    assert len(system["names"]) == 2
    page.get_by_label("GPU memory MiB").check()
    system = graph(page, lambda g: g["y"] == "GPU memory allocated (MiB)", js=SYSTEM_JS)
    assert len(system["names"]) == 1 and system["names"][0].startswith("sys-gpu")
    wait_text(page, "#compare-system-note", "base: no GPU memory MiB recorded")
    shot(page, "compare_system")
    page.get_by_label("CPU %").check()
    clear_runs(page)
    assert page.console_errors == []


def test_presets_save_and_select(page, cockpit):
    open_section(page, "Optimizer AdamW")
    lr = page.locator("#config-optimizer-adamw-lr")
    lr.fill("0.0021")
    lr.press("Tab")
    page.wait_for_timeout(500)
    page.fill("#preset-name", "my lr")
    page.click("#preset-save-btn")
    wait_text(page, "#preset-status", "Saved preset my-lr")
    assert (cockpit["presets"] / "my-lr.yaml").is_file()
    assert page.locator("#config-tier option[value='my-lr']").inner_text() == "my-lr (saved preset)"
    page.select_option("#config-tier", "tier1_micro")
    wait_text(page, "#config-file-status", "Loaded the tier1_micro preset")
    assert float(lr.input_value()) == pytest.approx(0.003)
    page.select_option("#config-tier", "my-lr")
    wait_text(page, "#config-file-status", "Loaded the my-lr preset")
    assert float(lr.input_value()) == pytest.approx(0.0021)
    shot(page, "presets_saved")
    assert page.console_errors == []


def test_run_management_notes_rename_delete(page, cockpit):
    runs = cockpit["runs"]
    page.get_by_role("tab", name="Runs", exact=True).click()
    page.locator("#runs-table td:has-text('victim')").first.click()    # a row click selects the run
    wait_text(page, "#runs-selected", "victim")
    page.fill("#runs-notes", "keeps the default lr #baseline")
    page.click("#runs-notes-save-btn")
    wait_text(page, "#runs-message", "Saved notes of victim")
    assert (runs / "victim" / "notes.md").read_text() == "keeps the default lr #baseline"
    # its tag is listed, and the table's filter row finds the run by it
    wait_text(page, "#runs-table", "#baseline")
    box = page.locator("#runs-table th.dash-filter[data-dash-column='tags'] input").first
    box.fill("baseline")
    box.press("Enter")
    page.wait_for_function("document.querySelectorAll('#runs-table tr td.dash-cell.column-0').length === 1",
                           timeout=TIMEOUT_MS)
    shown = page.inner_text("#runs-table tbody")
    assert "victim" in shown and "fast" not in shown
    box.fill("")
    box.press("Enter")
    wait_text(page, "#runs-table", "fast")
    page.fill("#runs-rename-input", "victim two")
    page.click("#runs-rename-btn")
    wait_text(page, "#runs-message", "Renamed victim to victim-two")
    assert (runs / "victim-two").is_dir() and not (runs / "victim").exists()
    wait_text(page, "#run-select", "victim-two")
    page.click("#runs-delete-btn")
    wait_text(page, "#runs-delete-body", "cannot be undone")
    shot(page, "runs_delete_dialog")
    page.click("#runs-delete-cancel-btn")
    wait_text(page, "#runs-message", "Nothing deleted")
    assert (runs / "victim-two").is_dir()
    page.click("#runs-delete-btn")
    page.wait_for_selector("#runs-delete-confirm-btn", state="visible")
    page.click("#runs-delete-confirm-btn")
    wait_text(page, "#runs-message", "Deleted victim-two")
    assert not (runs / "victim-two").exists()
    assert page.console_errors == []


def test_forge_runs_listed_opened_and_shown_read_only(page, cockpit):
    page.get_by_role("tab", name="Training", exact=True).click()
    pick(page, "run-select", "forge-a")
    wait_text(page, "#run-status", "Forge, read-only")
    wait_text(page, "#training-error", "(Forge, read-only)")
    assert "ckpt_000400.bin" in page.inner_text("#checkpoint-list")
    assert "399" in page.inner_text("#training-kpi-cards")
    page.wait_for_selector("#training-loss-graph .ytitle >> text=bits per token", timeout=TIMEOUT_MS)
    page.wait_for_selector("#resume-btn", state="hidden", timeout=TIMEOUT_MS)   # read-only: no Resume
    shot(page, "forge_training")
    page.get_by_role("tab", name="Runs", exact=True).click()
    page.fill("#forge-open-path", str(cockpit["outside"]))
    page.click("#forge-open-btn")
    wait_text(page, "#forge-open-message", "Opened forge-out (Forge, read-only)")
    wait_text(page, "#run-select", "forge-out (Forge, read-only)")
    page.get_by_role("tab", name="Training", exact=True).click()
    wait_text(page, "#training-error", "columns step,loss,lr,grad_norm,tokens_per_sec,val_loss")
    assert page.console_errors == []
