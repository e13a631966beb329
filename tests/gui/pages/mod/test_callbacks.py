"""MoD tab: empty states and metric cards through Dash's endpoint, and the tab in a browser."""
import pytest

from gui import ids as common
from gui.pages.mod import ids
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

FIRST = f"{ids.MOD_MESSAGE}.children"


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    d = tmp_path_factory.mktemp("mod-runs")
    write_run(d / "ok", 300)
    metrics_only_run(d / "off", mod=False)
    metrics_only_run(d / "nolower", pattern="SD")
    metrics_only_run(d / "early", steps=0)
    broken_run(d / "broken")
    return d


def test_empty_states_are_messages_not_tracebacks(runs):
    cases = {None: "No run selected", "off": "Mixture-of-Depths switched off",
             "nolower": "has no MoD blocks (block pattern 'SDSDSDSD'",
             "early": "No MoD gate fractions logged yet", "broken": "Cannot read"}
    with dash_client(runs) as c:
        for run, expected in cases.items():
            status, resp = controls(c, FIRST, common.TAB_MOD, run)
            assert status == 200
            assert expected in message_text(resp, ids.MOD_MESSAGE), run
            assert resp[ids.MOD_CARDS]["children"] == []
            for out in (ids.MOD_CURRENT, ids.MOD_HISTORY):
                fig = resp[out]["figure"]
                assert fig["data"] == [] and fig["layout"]["annotations"], (run, out)


def test_cards_current_and_history_from_the_newest_rows(runs):
    with dash_client(runs) as c:
        status, resp = controls(c, FIRST, common.TAB_MOD, "ok")
        assert status == 200 and message_text(resp, ids.MOD_MESSAGE) == ""
        cards = str(resp[ids.MOD_CARDS]["children"])
        for text in ("avg fraction processed", "deviation from capacity", "inference-time fraction",
                     "capacity 50%", "4 MoD blocks", "300"):
            assert text in cards
        history = resp[ids.MOD_HISTORY]["figure"]["data"]
        assert len(history) == 4 * 2 + 1 and history[-1]["name"] == "target capacity"
        assert next(t["x"] for t in resp[ids.MOD_CURRENT]["figure"]["data"]) == [
            "block 1", "block 3", "block 5", "block 7"]
        assert resp[ids.MOD_HISTORY_NOTE]["children"] == "All 30 logged steps."
        seen = {f"{ids.MOD_VERSION}.data": resp[ids.MOD_VERSION]["data"]}
        assert controls(c, FIRST, common.TAB_MOD, "ok", **seen)[0] == 204  # nothing new: no work


@pytest.mark.browser
def test_mod_tab_renders_cards_and_history(browser, sim_run, tmp_path):
    copy_sim_run(sim_run, tmp_path)
    with cockpit(tmp_path) as url, browser_page(browser, url) as page:
        open_tab(page, "MoD")
        wait_until(lambda: "avg fraction processed" in page.inner_text(f"#{ids.MOD_CARDS}").lower(),
                   what="the MoD metric cards")
        assert "deviation from capacity" in page.inner_text(f"#{ids.MOD_CARDS}").lower()
        names = [t["name"] for t in wait_for_traces(page, ids.MOD_HISTORY, at_least=3)]
        assert names == ["block 2 training", "block 2 inference", "target capacity"]
        bars = wait_for_traces(page, ids.MOD_CURRENT, at_least=2)
        assert [t["type"] for t in bars] == ["bar", "bar"]
        page.wait_for_timeout(500)
        shot(page, "analysis_mod")
        assert page.console_errors == []
