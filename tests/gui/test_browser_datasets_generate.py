"""Datasets, Generate and notifications in headless Chromium, one cockpit for the module:
- a dataset is built from a small folder with a live console, appears in the list, previews, and
  goes into the config editor's data.path; a failing build says why;
- sampling from a really trained checkpoint streams into the page and stops on Cancel;
- pasted text is coloured by per-byte surprisal, with the model's own bits per byte;
- killing a live simulated run raises a toast and a desktop notification, once (not on reload).
"""
import json
import subprocess
import sys

import pytest

from tests.conftest import ROOT
from tests.gui.analysis_support import open_tab
from tests.gui.browser_util import TIMEOUT_MS, new_page, shot, wait_text
from tests.gui.playground_support import STEPS, copy_run
from tests.gui.test_app_server import start_app
from umoec import generate as G
from umoec.run import RunDir

pytestmark = pytest.mark.browser

# Records desktop notifications instead of showing them; permission is granted on request.
FAKE_NOTIFICATION = """
window.__notes = [];
class FakeNotification {
  constructor(title, options) { window.__notes.push({title: title, body: (options || {}).body}); }
}
FakeNotification.permission = "default";
FakeNotification.requestPermission = async () => { FakeNotification.permission = "granted";
                                                   return "granted"; };
window.Notification = FakeNotification;
"""
SCORED = "import os\nprint(os.getcwd())\n"


@pytest.fixture(scope="module")
def cockpit(tmp_path_factory):
    base = tmp_path_factory.mktemp("partb")
    runs, data = base / "runs", base / "data"
    runs.mkdir()
    copy_run(runs / "tiny")
    proc, url = start_app(runs, "--refresh-ms", "500", "--data-dir", str(data))
    yield url, runs, data, base
    proc.terminate()
    proc.wait(10)


@pytest.fixture(scope="module")
def page(browser, cockpit):
    """One page for the module (the tests run in order, as one user session would)."""
    ctx, pg = new_page(browser)
    pg.add_init_script(FAKE_NOTIFICATION)
    pg.goto(cockpit[0])
    wait_text(pg, "#config-validation", "Config valid.")
    yield pg
    ctx.close()


def text_len(page, selector: str) -> int:
    return page.evaluate(f"(document.querySelector({json.dumps(selector)}) || "
                         "{textContent: ''}).textContent.length")


def test_build_a_dataset_and_use_it(page, cockpit):
    _url, _runs, data, base = cockpit
    src = base / "corpus"
    src.mkdir()
    for i in range(6):
        (src / f"doc{i}.txt").write_text(f"document {i}\n" + "the quick brown fox " * (30 + i))
    open_tab(page, "Datasets")
    wait_text(page, "#datasets-table", "No datasets yet")
    wait_text(page, "#datasets-run-usage", "tiny")  # the dataset each run uses

    page.fill("#datasets-new-name", "My Corpus!")
    page.fill("#datasets-new-sources", str(src))
    page.fill("#datasets-new-val-fraction", "0.2")
    page.click("#datasets-create-btn")
    wait_text(page, "#datasets-console", "bin.prepare_data")      # the live console
    wait_text(page, "#datasets-build-msg", "Built My-Corpus")
    wait_text(page, "#datasets-console", "prepare_data: ")        # the tool's own summary line
    wait_text(page, "#datasets-table", "My-Corpus")
    assert (data / "My-Corpus" / "dataset.json").is_file()
    wait_text(page, "#datasets-preview", "of val.bin")
    wait_text(page, "#datasets-preview", "the quick brown fox")
    wait_text(page, "#datasets-files", "6 files")
    shot(page, "datasets_built")

    page.wait_for_selector("#datasets-use-btn:not([disabled])", timeout=TIMEOUT_MS)
    page.click("#datasets-use-btn")
    wait_text(page, "#datasets-use-msg", "sent to the config editor")
    expected = str((data / "My-Corpus").resolve())
    page.wait_for_function(f"document.querySelector('#config-data-path').value === {json.dumps(expected)}",
                           timeout=TIMEOUT_MS)

    one = base / "one"
    one.mkdir()
    (one / "only.txt").write_text("x")   # one byte cannot be split into train and val ranges
    page.fill("#datasets-new-name", "single")
    page.fill("#datasets-new-sources", str(one))
    page.click("#datasets-create-btn")
    wait_text(page, "#datasets-build-msg", "Failed to build single (exit code 2)")
    assert "too few to split" in page.inner_text("#datasets-build-msg")
    wait_text(page, "#datasets-table", "incomplete")
    shot(page, "datasets_failed_build")
    assert page.console_errors == []


def test_generation_streams_and_cancels(page):
    open_tab(page, "Generate")
    wait_text(page, "#generate-model-info", "tiny")
    page.wait_for_selector("#generate-start-btn:not([disabled])", timeout=TIMEOUT_MS)
    page.fill("#generate-prompt", "import ")
    page.fill("#generate-max-bytes", str(G.MAX_SAMPLE_BYTES))
    page.fill("#generate-temperature", "1")
    page.click("#generate-start-btn")
    wait_text(page, "#generate-status", "Generating:")
    page.wait_for_function("document.querySelector('#generate-output .generated')"
                           " && document.querySelector('#generate-output .generated')"
                           ".textContent.length > 0", timeout=TIMEOUT_MS)
    first = text_len(page, "#generate-output .generated")
    page.wait_for_function(f"document.querySelector('#generate-output .generated').textContent.length"
                           f" > {first}", timeout=TIMEOUT_MS)        # it grows as it comes
    assert page.inner_text("#generate-output .prompt") == "import "
    page.click("#generate-cancel-btn")
    status = wait_text(page, "#generate-status", "Cancelled after")
    assert f"of {G.MAX_SAMPLE_BYTES:,} bytes" in status
    page.wait_for_selector("#generate-cancel-btn[disabled]", timeout=TIMEOUT_MS)
    shot(page, "generate_cancelled")

    page.fill("#generate-max-bytes", "40")
    page.click("#generate-start-btn")
    wait_text(page, "#generate-status", "Done: 40 bytes")
    assert f"checkpoint step {STEPS}" in page.inner_text("#generate-status")
    assert page.console_errors == []


def test_surprisal_colouring(page, cockpit):
    open_tab(page, "Generate")
    page.wait_for_selector("#surprisal-btn:not([disabled])", timeout=TIMEOUT_MS)
    page.fill("#surprisal-text", SCORED)
    page.click("#surprisal-btn")
    summary = wait_text(page, "#surprisal-summary", "bpb")
    ckpt = RunDir(cockpit[1] / "tiny").latest_checkpoint().path
    bits = G.surprisal_bits(G.load(ckpt), SCORED.encode())
    assert f"{bits.mean():.3f} bpb" in summary and f"{len(SCORED)} bytes" in summary
    classes = page.eval_on_selector_all("#surprisal-view span", "els => els.map(e => e.className)")
    assert len(classes) == len(SCORED) and all(c.startswith("sp-") for c in classes)
    assert len(set(classes)) > 1   # not one flat colour
    assert page.locator(".surprisal-legend .sp-swatch").count() == 17
    shot(page, "generate_surprisal")
    assert page.console_errors == []


def test_crash_raises_a_toast_and_a_notification_once(page, cockpit):
    runs = cockpit[1]
    page.click("#notify-enable-btn")  # permission is asked on a click, never on load
    wait_text(page, "#notify-permission", "desktop notifications on")
    sim = subprocess.Popen([sys.executable, "-m", "bin.simulate_training", "--out",
                            str(runs / "doomed"), "--steps", "100000", "--live", "--rate", "20",
                            "--quiet"], cwd=ROOT)
    try:
        page.wait_for_function("(JSON.parse(localStorage.getItem('notify-seen') || '{}').runs || {})"
                               "['doomed']?.state === 'running'", timeout=TIMEOUT_MS)
        sim.kill()
        sim.wait(10)
        toast = wait_text(page, "#notify-toasts", "doomed crashed")
        assert "is gone without a final status" in toast
        page.wait_for_function("window.__notes.length > 0", timeout=TIMEOUT_MS)
        notes = page.evaluate("window.__notes")
        assert [n["title"] for n in notes] == ["doomed crashed"]
        status = RunDir(runs / "doomed").read_status()
        assert status.state == "crashed" and "not started by this cockpit" in status.message
        shot(page, "notify_crash_toast")

        page.reload()
        wait_text(page, "#config-validation", "Config valid.")
        page.wait_for_function("(JSON.parse(localStorage.getItem('notify-seen') || '{}').runs || {})"
                               "['doomed']?.state === 'crashed'", timeout=TIMEOUT_MS)
        page.wait_for_timeout(2000)  # a few refresh ticks after the reload
        assert "doomed" not in page.inner_text("#notify-toasts")
        assert page.evaluate("window.__notes") == []
        assert page.console_errors == []
    finally:
        if sim.poll() is None:
            sim.kill()
            sim.wait(10)
