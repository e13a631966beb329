"""The config sidebar in headless Chromium: every tab renders, the form validates inline, Save and
Load round-trip, the component checklist follows the switches, the form survives a reload.

One cockpit process serves the whole module (a completed simulated run in its runs folder); every
test gets a fresh browser context, so localStorage starts empty.
"""
import shutil

import pytest

from tests.gui.browser_util import (
    SHOWN_PANE_HAS_TEXT,
    TIMEOUT_MS,
    new_page,
    open_section,
    set_field,
    shot,
    wait_text,
)
from tests.gui.test_app_server import start_app
from umoec import config as C

pytestmark = pytest.mark.browser

TABS = ["Training", "Architecture", "Routing", "MoD", "Activations", "Brain", "Compression",
        "Evaluation", "Growth"]


@pytest.fixture(scope="module")
def cockpit(sim_run, tmp_path_factory):
    runs = tmp_path_factory.mktemp("cfg-runs")
    shutil.copytree(sim_run, runs / "sim600")
    proc, url = start_app(runs, "--refresh-ms", "1000")
    yield url
    proc.terminate()
    proc.wait(10)


@pytest.fixture
def page(browser, cockpit):
    ctx, pg = new_page(browser)
    pg.goto(cockpit)
    wait_text(pg, "#config-validation", "Config valid.")
    yield pg
    ctx.close()


def test_every_tab_renders_without_console_errors(page):
    wait_text(page, "#training-kpi-cards", "600")
    for tab in TABS:
        page.get_by_role("tab", name=tab, exact=True).click()
        page.wait_for_function(SHOWN_PANE_HAS_TEXT, timeout=TIMEOUT_MS)   # built on first show
        page.wait_for_timeout(1200)  # one refresh tick
        assert page.locator(".cockpit-pane:not(.d-none)").inner_text().strip(), f"tab {tab} is blank"
        shot(page, f"tab_{tab.lower()}")
    assert page.console_errors == []
    # every chart drew with the cockpit's partial plotly.js; the full bundle was never loaded
    assert any(u.endswith("05_plotly.min.js") or "05_plotly.min.js?" in u for u in page.scripts)
    assert not [u for u in page.scripts if "package_data/plotly" in u]


def test_sidebar_has_every_schema_field_with_its_id(page):
    from gui.form import FIELDS
    for f in FIELDS:
        assert page.locator(f"#{f.component_id}").count() == 1, f.component_id
    for spec_id in ("config-start-btn", "config-stop-btn", "config-status", "config-model-d-model",
                    "config-moe-n-routed", "resume-checkpoint", "resume-btn"):
        assert page.locator(f"#{spec_id}").count() == 1, spec_id
    assert "parameters" in page.inner_text("#config-derived")
    assert "bytes / step" in page.inner_text("#config-derived")
    page.wait_for_selector("#config-lr-preview .main-svg", timeout=TIMEOUT_MS)


def test_bad_value_is_marked_and_disables_start(page):
    open_section(page, "MoE")
    set_field(page, "config-moe-top-k", 9)
    wait_text(page, "#config-moe-top-k-msg", "moe.top_k=9 must be <= moe.n_routed=8")
    assert "is-invalid" in page.get_attribute("#config-moe-top-k", "class")
    assert page.is_disabled("#config-start-btn")
    assert "1 error" in page.inner_text("#config-section-moe .accordion-button")
    wait_text(page, "#config-validation", "Start is disabled")
    shot(page, "config_invalid")
    set_field(page, "config-moe-top-k", 2)
    wait_text(page, "#config-validation", "Config valid.")
    assert page.inner_text("#config-moe-top-k-msg") == ""
    assert not page.is_disabled("#config-start-btn")
    assert page.console_errors == []


def test_save_then_load_round_trips(page, tmp_path):
    target = tmp_path / "edited.yaml"
    open_section(page, "Model")
    set_field(page, "config-model-d-model", 192)
    open_section(page, "Optimizer AdamW")
    set_field(page, "config-optimizer-adamw-betas", "0.8,0.99")
    page.fill("#config-save-path", str(target))
    page.click("#config-save-btn")
    wait_text(page, "#config-file-status", f"Saved {target}")
    saved = C.load(target)
    assert saved.model.d_model == 192 and saved.optimizer.adamw.betas == (0.8, 0.99)

    set_field(page, "config-model-d-model", 256)
    page.fill("#config-load-path", str(target))
    page.click("#config-load-btn")
    wait_text(page, "#config-file-status", f"Loaded {target}")
    page.wait_for_function("document.querySelector('#config-model-d-model').value === '192'",
                           timeout=TIMEOUT_MS)
    assert page.input_value("#config-optimizer-adamw-betas") == "0.8,0.99"
    assert page.console_errors == []


def test_load_and_save_errors_are_messages(page, tmp_path):
    page.fill("#config-load-path", str(tmp_path / "missing.yaml"))
    page.click("#config-load-btn")
    wait_text(page, "#config-file-status", "no such file")
    (tmp_path / "junk.yaml").write_text("model: [unclosed\n")
    page.fill("#config-load-path", str(tmp_path / "junk.yaml"))
    page.click("#config-load-btn")
    wait_text(page, "#config-file-status", "not valid YAML")
    page.fill("#config-save-path", str(tmp_path / "no-such-dir" / "x.yaml"))
    page.click("#config-save-btn")
    wait_text(page, "#config-file-status", "does not exist")
    (tmp_path / "kept.yaml").write_text("# mine\n")            # an existing file: asked first
    page.fill("#config-save-path", str(tmp_path / "kept.yaml"))
    page.click("#config-save-btn")
    wait_text(page, "#config-file-status", "press Save Config again to overwrite")
    assert (tmp_path / "kept.yaml").read_text() == "# mine\n"
    page.click("#config-save-btn")
    wait_text(page, "#config-file-status", f"Saved {tmp_path / 'kept.yaml'}")
    assert page.console_errors == []


def test_checklist_and_switches_stay_in_sync(page):
    open_section(page, "Cascade")
    assert page.is_checked("#config-cascade-enabled")
    page.locator("#config-components label:text-is('Cascade')").click()
    page.wait_for_function("!document.querySelector('#config-cascade-enabled').checked",
                           timeout=TIMEOUT_MS)
    open_section(page, "LoRA")
    page.locator("#config-lora-enabled").click()
    page.wait_for_function(
        "[...document.querySelectorAll('#config-components input')].some("
        "i => i.checked && i.value === 'lora.enabled')", timeout=TIMEOUT_MS)
    assert page.console_errors == []


def test_form_survives_reload_and_tier_and_reset_reload_presets(page):
    open_section(page, "Training")
    set_field(page, "config-training-steps", 1234)
    wait_text(page, "#config-derived", "1,234 steps")
    page.reload()
    wait_text(page, "#config-derived", "1,234 steps")
    open_section(page, "Training")
    assert page.input_value("#config-training-steps") == "1234"
    page.select_option("#config-tier", "tier2_small")
    wait_text(page, "#config-file-status", "Loaded the tier2_small preset")
    assert page.input_value("#config-training-steps") == str(C.load_preset("tier2_small").training.steps)
    set_field(page, "config-training-steps", 77)
    page.click("#config-reset-btn")
    wait_text(page, "#config-file-status", "Reset to the tier2_small defaults")
    assert page.input_value("#config-training-steps") == str(C.load_preset("tier2_small").training.steps)
    assert page.console_errors == []

