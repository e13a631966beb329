"""Routing tab: database readers, the incremental history cache, callbacks (empty states, slider,
click) through Dash's endpoint, and the tab in headless Chromium on a simulated run."""
import numpy as np
import pytest

from gui import ids as common
from gui.pages.routing import ids
from gui.services.analysis import HistoryCache
from gui.view.analysis import slider_marks
from tests.gui.analysis_support import (
    broken_run,
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
from umoec.metrics import TrainingDB, read

FIRST = f"{ids.ROUTING_STEP}.min"


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """ok (600 steps, 8 blocks x 16 experts), nomoe, broken, early (nothing logged yet), silent
    (training metrics but no routing rows), nodb (no metrics.db)."""
    d = tmp_path_factory.mktemp("routing-runs")
    write_run(d / "ok", 600)
    metrics_only_run(d / "nomoe", pattern="D", mod=False)
    metrics_only_run(d / "early", steps=0)
    metrics_only_run(d / "silent")
    broken_run(d / "broken")
    (d / "nodb").mkdir()  # a run folder whose process has not opened its database yet
    (d / "nodb" / "config.yaml").write_text((d / "ok" / "config.yaml").read_text())
    return d


# -- umoec/metrics/read.py readers-------------------------------------------------------------------------
def test_step_readers_use_logged_steps(runs):
    with read.open_db(runs / "ok" / "metrics.db") as conn:
        assert read.step_bounds(conn, "moe_routing") == (10, 600, 10)
        assert read.step_bounds(conn, "hidden_states") == (200, 600, 200)
        assert read.nearest_logged_step(conn, "moe_routing", 455) == 450
        assert read.nearest_logged_step(conn, "moe_routing", 3) == 10
        assert read.nearest_logged_step(conn, "moe_routing", None) == 600
        assert read.logged_steps(conn, "moe_routing", since_step=570) == [580, 590, 600]
        assert read.logged_steps(conn, "mod_gates")[:2] == [10, 20]
        rows = read.rows_at_steps(conn, "moe_routing", [600, 20])
        assert len(rows) == 2 * 8 * 16 and list(rows["step"].unique()) == [20, 600]
        e = read.moe_expert_history(conn, 3, 5)
        assert len(e) == 60 and set(e["expert_idx"]) == {5} and e["step"].is_monotonic_increasing
        assert len(read.moe_expert_history(conn, 3, 5, since_step=590)) == 1
        assert read.run_generation(conn) == 1
    with read.open_db(runs / "early" / "metrics.db") as conn:
        assert read.step_bounds(conn, "moe_routing") == (None, None, None)
        assert read.rows_at_steps(conn, "moe_routing", []).empty
    with pytest.raises(ValueError):
        read.step_bounds(None, "train_metrics; DROP TABLE x")


def test_slider_marks_are_round_numbers_with_both_ends():
    assert slider_marks(10, 600) == {"10": "10", "100": "100", "200": "200", "300": "300", "400": "400",
                                     "500": "500", "600": "600"}
    marks = slider_marks(10, 200_000)
    assert marks["10"] == "10" and marks["200000"] == "200k" and len(marks) <= 8
    assert slider_marks(50, 50) == {"50": "50"}


# -- the incremental, thinned history -------------------------------------------------------------
def test_history_cache_reads_new_rows_only_thins_and_keeps_the_newest(tmp_path):
    run = write_run(tmp_path / "r", 300)  # 30 logged steps
    cache = HistoryCache("moe_routing", max_steps=8)
    with read.open_db(run.db_path) as conn:
        rows, stride, n = cache.get(conn, run.db_path)
    assert n == 30 and stride == 4  # 30 steps -> every 4th (8 kept) + the newest
    kept = sorted(rows["step"].unique())
    assert kept == [10, 50, 90, 130, 170, 210, 250, 290, 300]
    assert len(rows) == len(kept) * 8 * 16
    with TrainingDB(run.db_path) as w:
        from bench.bench_analysis import write_rows
        write_rows(w, 301, 340)  # 4 more logged steps: ordinals 30..33
    with read.open_db(run.db_path) as conn:
        rows, stride, n = cache.get(conn, run.db_path)
    assert n == 34 and stride == 8  # 10 kept would exceed 8: the stride doubled
    assert sorted(rows["step"].unique()) == [10, 90, 170, 250, 330, 340]


def test_history_cache_starts_over_when_the_run_is_resumed(tmp_path):
    run = write_run(tmp_path / "r", 200)
    cache = HistoryCache("moe_routing")
    with read.open_db(run.db_path) as conn:
        assert cache.get(conn, run.db_path)[2] == 20
    with TrainingDB(run.db_path) as w:  # what a resume from step 100 does
        w.discard_after(100)
        w.insert_event("resume", "resumed from step 100", step=100)
        from bench.bench_analysis import write_rows
        write_rows(w, 101, 150, seed=7)
    with read.open_db(run.db_path) as conn:
        rows, _, n = cache.get(conn, run.db_path)
        fresh = read.rows_at_steps(conn, "moe_routing", read.logged_steps(conn, "moe_routing"))
    assert n == 15 and rows["step"].max() == 150
    np.testing.assert_allclose(np.sort(rows["load"].to_numpy()), np.sort(fresh["load"].to_numpy()))


# -- callbacks through Dash's endpoint ------------------------------------------------------------
def test_empty_states_are_messages_not_tracebacks(runs):
    with dash_client(runs) as c:
        cases = {None: "No run selected", "nomoe": "has no MoE blocks (block pattern 'DDDDDDDD'",
                 "early": "No expert routing logged yet", "silent": "does not log routing",
                 "broken": "Cannot read", "nodb": "has no metrics database yet"}
        for run, expected in cases.items():
            status, resp = controls(c, FIRST, common.TAB_ROUTING, run)
            assert status == 200, run
            assert expected in message_text(resp, ids.ROUTING_MESSAGE), run
            assert resp[ids.ROUTING_STEP]["disabled"] is True
            version = resp[ids.ROUTING_VERSION]["data"]
            for out in (f"{ids.ROUTING_HEATMAP}.figure", f"{ids.ROUTING_HISTORY}.figure",
                        f"{ids.ROUTING_EXPERT_DETAIL}.figure"):
                status, figs = c.call(out, {f"{ids.ROUTING_VERSION}.data": version}, [])
                assert status == 200
                fig = next(iter(figs.values()))["figure"]
                assert fig["data"] == [] and fig["layout"]["annotations"], (run, out)


def test_inactive_tab_and_unchanged_data_do_no_work(runs):
    with dash_client(runs) as c:
        assert controls(c, FIRST, common.TAB_MOD, "ok")[0] == 204
        _status, resp = controls(c, FIRST, common.TAB_ROUTING, "ok")
        version = resp[ids.ROUTING_VERSION]["data"]
        again = {f"{ids.ROUTING_VERSION}.data": version}
        assert controls(c, FIRST, common.TAB_ROUTING, "ok", **again)[0] == 204


def test_slider_follows_the_newest_step_until_moved_back(runs, tmp_path):
    run = write_run(tmp_path / "live", 100)
    with dash_client(tmp_path) as c:
        _, r = controls(c, FIRST, common.TAB_ROUTING, "live")
        s = r[ids.ROUTING_STEP]
        assert (s["min"], s["max"], s["step"], s["value"]) == (10, 100, 10, 100)
        assert r[ids.ROUTING_BLOCK]["value"] == 0 and len(r[ids.ROUTING_BLOCK]["options"]) == 8
        with TrainingDB(run.db_path) as w:
            from bench.bench_analysis import write_rows
            write_rows(w, 101, 120)
        seen = {f"{ids.ROUTING_VERSION}.data": r[ids.ROUTING_VERSION]["data"]}
        _, r2 = controls(c, FIRST, common.TAB_ROUTING, "live", **seen,
                         **{f"{ids.ROUTING_STEP}.value": 100, f"{ids.ROUTING_STEP}.max": 100})
        assert r2[ids.ROUTING_STEP]["value"] == 120  # was at the newest: follows
        _, r3 = controls(c, FIRST, common.TAB_ROUTING, "live", **seen,
                         **{f"{ids.ROUTING_STEP}.value": 40, f"{ids.ROUTING_STEP}.max": 100})
        assert r3[ids.ROUTING_STEP]["value"] == 40  # moved back by the user: stays
        version = r3[ids.ROUTING_VERSION]["data"]
        _, heat = c.call(f"{ids.ROUTING_HEATMAP}.figure", {f"{ids.ROUTING_STEP}.value": 45,
                                                            f"{ids.ROUTING_VERSION}.data": version}, [])
        assert heat[ids.ROUTING_STEP_LABEL]["children"] == "step 40 (newest: 120)"


def test_click_selects_the_expert_and_its_block_and_fills_the_detail(runs):
    with dash_client(runs) as c:
        _, r = controls(c, FIRST, common.TAB_ROUTING, "ok")
        version = r[ids.ROUTING_VERSION]["data"]
        click = {"points": [{"curveNumber": 0, "x": 5, "y": "3", "z": 0.07}]}
        status, sel = c.call(f"{ids.ROUTING_SELECTED}.data", {f"{ids.ROUTING_HEATMAP}.clickData": click,
                                                              f"{ids.ROUTING_VERSION}.data": version},
                             [f"{ids.ROUTING_HEATMAP}.clickData"])
        assert status == 200
        selected = sel[ids.ROUTING_SELECTED]["data"]
        assert selected == {"run": "ok", "block": 3, "expert": 5}
        assert sel[ids.ROUTING_BLOCK]["value"] == 3
        _, det = c.call(f"{ids.ROUTING_EXPERT_DETAIL}.figure",
                        {f"{ids.ROUTING_SELECTED}.data": selected, f"{ids.ROUTING_VERSION}.data": version},
                        [f"{ids.ROUTING_SELECTED}.data"])
        fig = det[ids.ROUTING_EXPERT_DETAIL]["figure"]
        assert fig["layout"]["title"]["text"] == "block 3, expert 5"
        assert [t["name"] for t in fig["data"]] == ["load", "bias", "balanced 1/16"]
        bad = {"points": [{"curveNumber": 0}]}
        assert c.call(f"{ids.ROUTING_SELECTED}.data", {f"{ids.ROUTING_HEATMAP}.clickData": bad},
                      [f"{ids.ROUTING_HEATMAP}.clickData"])[0] == 204


# -- the tab in a browser -------------------------------------------------------------------------

@pytest.mark.browser
def test_routing_tab_renders_and_drills_down_on_click(browser, sim_run, tmp_path):
    copy_sim_run(sim_run, tmp_path)
    with cockpit(tmp_path) as url, browser_page(browser, url) as page:
        open_tab(page, "Routing")
        heat = wait_for_traces(page, ids.ROUTING_HEATMAP)
        assert heat[0]["type"] == "heatmap"
        wait_until(lambda: "step 600 (newest)" in page.inner_text(f"#{ids.ROUTING_STEP_LABEL}"),
                   what="the heatmap at the newest step")
        history = wait_for_traces(page, ids.ROUTING_HISTORY, at_least=9)
        assert [t["name"] for t in history][:2] == ["expert 0", "expert 1"]
        assert history[-1]["name"] == "balanced 1/8"
        balance = wait_for_traces(page, ids.ROUTING_BALANCE, at_least=7)  # 3 blocks x 2 + references
        assert {t["name"] for t in balance} >= {"block 1", "block 2", "block 3", "balanced"}
        # Click the cell of block 2 (second row of blocks 1, 2, 3), expert 5 (of 8).
        box = page.locator(f"#{ids.ROUTING_HEATMAP} .nsewdrag").first.bounding_box()
        page.mouse.click(box["x"] + box["width"] * 5.5 / 8, box["y"] + box["height"] * 1.5 / 3)
        wait_until(lambda: layout_title(page, ids.ROUTING_EXPERT_DETAIL) == "block 2, expert 5",
                   what="the drill-down of block 2, expert 5")
        assert [t["name"] for t in wait_for_traces(page, ids.ROUTING_EXPERT_DETAIL, 2)][:2] == ["load",
                                                                                              "bias"]
        wait_until(lambda: "block 2" in page.inner_text(f"#{ids.ROUTING_BLOCK}"),
                   what="the history to switch to block 2")
        page.wait_for_timeout(500)
        shot(page, "analysis_routing")
        assert page.console_errors == []
