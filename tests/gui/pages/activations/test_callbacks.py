"""Activations tab: empty states and the step selector through Dash's endpoint, and the tab in a
browser (distribution boxes and statistics heatmap, moving the step)."""
import pytest

from gui import ids as common
from gui.pages.activations import ids
from tests.gui.analysis_support import (
    broken_run,
    browser_page,
    cockpit,
    controls,
    copy_sim_run,
    dash_client,
    message_text,
    metrics_only_run,
    open_tab,
    shot,
    wait_for_traces,
    wait_until,
    write_run,
)

FIRST = f"{ids.ACT_STEP}.min"


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    d = tmp_path_factory.mktemp("act-runs")
    write_run(d / "ok", 300)
    metrics_only_run(d / "early")
    broken_run(d / "broken")
    return d


def test_empty_states_are_messages_not_tracebacks(runs):
    cases = {None: "No run selected", "broken": "Cannot read",
             "early": "No activation statistics yet (before the first evaluation): the trainer writes "
                      "a snapshot every logging.eval_every (200) steps"}
    with dash_client(runs) as c:
        for run, expected in cases.items():
            status, resp = controls(c, FIRST, common.TAB_ACTIVATIONS, run)
            assert status == 200 and expected in message_text(resp, ids.ACT_MESSAGE), run
            version = resp[ids.ACT_VERSION]["data"]
            _, figs = c.call(f"{ids.ACT_DIST}.figure", {f"{ids.ACT_VERSION}.data": version}, [])
            for out in (ids.ACT_DIST, ids.ACT_HEATMAP):
                assert figs[out]["figure"]["data"] == [], (run, out)


def test_step_selector_shows_the_nearest_logged_snapshot(runs):
    with dash_client(runs) as c:
        _, resp = controls(c, FIRST, common.TAB_ACTIVATIONS, "ok")
        version = resp[ids.ACT_VERSION]["data"]
        assert resp[ids.ACT_STEP]["value"] == 300 and resp[ids.ACT_STEP]["step"] == 10
        _, figs = c.call(f"{ids.ACT_DIST}.figure", {f"{ids.ACT_STEP}.value": 127,
                                                    f"{ids.ACT_VERSION}.data": version}, [])
        assert figs[ids.ACT_STEP_LABEL]["children"] == "step 120 (newest: 300)"
        boxes = figs[ids.ACT_DIST]["figure"]["data"]
        assert len(boxes) == 8 and all(b["type"] == "box" for b in boxes)
        assert len(figs[ids.ACT_HEATMAP]["figure"]["data"][0]["y"]) == 8


@pytest.mark.browser
def test_activations_tab_renders_and_moves_between_snapshots(browser, sim_run, tmp_path):
    copy_sim_run(sim_run, tmp_path)
    with cockpit(tmp_path) as url, browser_page(browser, url) as page:
        open_tab(page, "Activations")
        boxes = wait_for_traces(page, ids.ACT_DIST, at_least=4)
        assert [b["type"] for b in boxes] == ["box"] * 4
        assert wait_for_traces(page, ids.ACT_HEATMAP)[0]["type"] == "heatmap"
        wait_until(lambda: "step 600 (newest)" in page.inner_text(f"#{ids.ACT_STEP_LABEL}"),
                   what="the newest snapshot")
        box = page.locator(f"#{ids.ACT_STEP} input[type=number]")
        box.fill("300")
        box.press("Tab")  # the slider's number box commits on blur
        wait_until(lambda: "step 300 (newest: 600)" in page.inner_text(f"#{ids.ACT_STEP_LABEL}"),
                   what="the snapshot at step 300")
        page.wait_for_timeout(500)
        shot(page, "analysis_activations")
        assert page.console_errors == []
