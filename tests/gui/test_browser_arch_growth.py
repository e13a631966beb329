"""Architecture and Growth tabs in headless Chromium: the diagram follows the sidebar (tier and
fields; an invalid form is a message), the growth knobs start from the form and Copy fills the
sidebar. One cockpit process serves the module; every test gets a fresh browser context."""
import pytest

from tests.gui.browser_util import TIMEOUT_MS, new_page, open_section, set_field, shot, wait_text
from tests.gui.test_app_server import start_app

pytestmark = pytest.mark.browser

COUNT_SHAPES = """(rx) => {
    const g = document.querySelector('#arch-diagram .js-plotly-plot');
    if (!g || !g.layout || !g.layout.shapes) return -1;
    const r = new RegExp('^' + rx + '$');
    return g.layout.shapes.filter(s => s.name && r.test(s.name)).length;
}"""


@pytest.fixture(scope="module")
def cockpit(tmp_path_factory):
    proc, url = start_app(tmp_path_factory.mktemp("arch-runs"))
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


def wait_blocks(page, n: int) -> None:
    page.wait_for_function(f"({COUNT_SHAPES})('block-\\\\d+') === {n}", timeout=TIMEOUT_MS)


def test_diagram_follows_the_sidebar(page):
    page.get_by_role("tab", name="Architecture", exact=True).click()
    wait_blocks(page, 4)                                             # tier1_micro: DSsS
    assert page.evaluate(COUNT_SHAPES, "block-\\d+-ffn-moe") == 3
    assert page.evaluate(COUNT_SHAPES, "block-\\d+-mod") == 1
    assert page.evaluate(COUNT_SHAPES, "block-\\d+-exit") == 1
    assert page.locator("#arch-block-table tr.arch-block-row").count() == 4
    assert "1,098,763" in page.inner_text("#arch-block-table")       # sizing.total_params
    wait_text(page, "#arch-metric-cards", "1.1 M")
    shot(page, "arch_tier1")

    page.select_option("#config-tier", "tier3_base")
    wait_blocks(page, 12)
    assert page.evaluate(COUNT_SHAPES, "patch-\\d+") == 3
    page.locator("#arch-diagram").screenshot(path=str(_artifact("arch_tier3_diagram")))

    open_section(page, "Model")
    set_field(page, "config-model-n-blocks", 24)
    wait_blocks(page, 24)
    assert page.locator("#arch-block-table tr.arch-block-row").count() == 24
    shot(page, "arch_24_blocks")

    set_field(page, "config-model-d-model", 5)
    wait_text(page, "#arch-message", "error")
    wait_blocks(page, -1)                                            # the empty figure
    set_field(page, "config-model-d-model", 512)
    wait_blocks(page, 24)
    assert page.console_errors == []


def test_growth_knobs_copy_into_the_sidebar(page):
    page.get_by_role("tab", name="Growth", exact=True).click()
    wait_text(page, "#growth-d-model-value", "96")
    page.wait_for_selector("#growth-curves .main-svg", timeout=TIMEOUT_MS)
    assert page.is_disabled("#growth-copy-btn")                     # knobs equal the config
    for slider, presses in (("#growth-d-model", 2), ("#growth-n-blocks", 2)):
        page.locator(f"{slider} [role=slider]").focus()
        for _ in range(presses):
            page.keyboard.press("ArrowRight")
    wait_text(page, "#growth-d-model-value", "192 (config 96)")
    wait_text(page, "#growth-n-blocks-value", "6 (config 4)")
    page.wait_for_function("!document.querySelector('#growth-copy-btn').disabled",
                           timeout=TIMEOUT_MS)
    shot(page, "growth_before_copy")

    page.click("#growth-copy-btn")
    page.wait_for_function("document.querySelector('#config-model-d-model').value === '192'",
                           timeout=TIMEOUT_MS)
    assert page.input_value("#config-model-n-blocks") == "6"
    wait_text(page, "#config-file-status", "from Growth")
    wait_text(page, "#growth-status", "Copied into the config editor: d_model=192, n_blocks=6")
    page.wait_for_function("document.querySelector('#growth-copy-btn').disabled",
                           timeout=TIMEOUT_MS)                      # the form caught up
    assert "config" not in page.inner_text("#growth-d-model-value")
    wait_text(page, "#config-validation", "Config valid.")
    shot(page, "growth_after_copy")

    page.get_by_role("tab", name="Architecture", exact=True).click()
    wait_blocks(page, 6)                                             # the diagram sees it too
    assert page.console_errors == []


def _artifact(name: str):
    from tests.conftest import ARTIFACTS
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS / f"{name}.png"
