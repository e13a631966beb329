"""Brain tab: empty states and block selection through Dash's endpoint, and the PCA scatter in a
browser (all blocks, then one block)."""
import pytest

from gui import ids as common
from gui.pages.brain import ids
from tests.gui.analysis_support import (
    browser_page,
    cockpit,
    controls,
    copy_sim_run,
    dash_client,
    layout_title,
    message_text,
    metrics_only_run,
    open_tab,
    shot,
    wait_for_traces,
    wait_until,
    write_run,
)

FIRST = f"{ids.BRAIN_STEP}.min"


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    d = tmp_path_factory.mktemp("brain-runs")
    write_run(d / "ok", 450)
    metrics_only_run(d / "early")
    return d


def test_before_the_first_snapshot_and_without_a_run(runs):
    with dash_client(runs) as c:
        for run, expected in {None: "No run selected", "early": "No hidden-state snapshots yet"}.items():
            status, resp = controls(c, FIRST, common.TAB_BRAIN, run)
            assert status == 200 and expected in message_text(resp, ids.BRAIN_MESSAGE)
            assert resp[ids.BRAIN_STEP]["disabled"] is True
            _, fig = c.call(f"{ids.BRAIN_PCA}.figure", {f"{ids.BRAIN_VERSION}.data":
                                                        resp[ids.BRAIN_VERSION]["data"]}, [])
            assert fig[ids.BRAIN_PCA]["figure"]["data"] == []


def test_block_selector_and_snapshot_steps(runs):
    with dash_client(runs) as c:
        _, resp = controls(c, FIRST, common.TAB_BRAIN, "ok", **{f"{ids.BRAIN_BLOCK}.value": "all"})
        s = resp[ids.BRAIN_STEP]
        assert (s["min"], s["max"], s["step"], s["value"]) == (200, 400, 200, 400)
        options = resp[ids.BRAIN_BLOCK]["options"]
        assert options[0]["value"] == "all" and [o["value"] for o in options[1:]] == list(range(8))
        version = resp[ids.BRAIN_VERSION]["data"]
        _, fig = c.call(f"{ids.BRAIN_PCA}.figure", {f"{ids.BRAIN_STEP}.value": 250,
                                                    f"{ids.BRAIN_BLOCK}.value": 6,
                                                    f"{ids.BRAIN_VERSION}.data": version}, [])
        (_scatter,) = fig[ids.BRAIN_PCA]["figure"]["data"]
        assert fig[ids.BRAIN_STEP_LABEL]["children"] == "step 200 (newest: 400)"
        assert "block 6 at step 200" in fig[ids.BRAIN_PCA]["figure"]["layout"]["title"]["text"]


@pytest.mark.browser
def test_brain_tab_renders_all_blocks_then_one(browser, sim_run, tmp_path):
    copy_sim_run(sim_run, tmp_path)
    with cockpit(tmp_path) as url, browser_page(browser, url) as page:
        open_tab(page, "Brain")
        assert len(wait_for_traces(page, ids.BRAIN_PCA, at_least=4)) == 4  # blocks 0..3
        page.click(f"#{ids.BRAIN_BLOCK}")
        page.get_by_role("option", name="block 3", exact=True).click()
        wait_until(lambda: layout_title(page, ids.BRAIN_PCA).startswith("block 3 at step 600"),
                   what="block 3's scatter")
        assert len(wait_for_traces(page, ids.BRAIN_PCA)) == 1
        page.wait_for_timeout(500)
        shot(page, "analysis_brain")
        assert page.console_errors == []
