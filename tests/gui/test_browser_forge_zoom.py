"""The Training tab's loss chart in headless Chromium, on long and on growing runs: a zoom on a
200,000-row Forge run is re-aggregated at full resolution and holds for 30 s without the chart
being sent again; "follow live" on/off on a growing Forge run and on a growing run of ours (the
simulator, live)."""
from __future__ import annotations

import contextlib
import itertools
import subprocess
import sys
import threading
import time

import pytest

from gui import ids as common
from gui.pages.training import ids
from tests.conftest import ROOT
from tests.gui.browser_util import TIMEOUT_MS, kill_runs, new_page, shot
from tests.gui.forge_fixtures import append_forge_rows, write_forge_run
from tests.gui.test_app_server import start_app

pytestmark = pytest.mark.browser

BIG_ROWS = 200_000
HOLD_S = 30
GROW_STEPS = 120   # both growing runs make 40 steps/s
# the loss chart as the page holds it: trace 0 (raw loss) x values, the x range plotly draws
# (_fullLayout: after autorange too), whether it autoranges, and the y title (which run kind)
CHART_JS = f"""() => {{const gd = document.querySelector('#{ids.TRAINING_LOSS} .js-plotly-plot');
  if (!gd || !gd.data || gd.data.length < 2 || !gd._fullLayout || !gd._fullLayout.xaxis) return null;
  return {{x: Array.from(gd.data[0].x || []), range: gd._fullLayout.xaxis.range.slice(),
          auto: !!gd.layout.xaxis.autorange, ytitle: (gd.layout.yaxis.title || {{}}).text || ''}};}}"""
RELAYOUT_JS = f"""([a, b]) => Plotly.relayout(
  document.querySelector('#{ids.TRAINING_LOSS} .js-plotly-plot'), {{'xaxis.range': [a, b]}})"""
FOLLOW = f"#{ids.TRAINING_FOLLOW}"


@pytest.fixture(scope="module")
def cockpit(tmp_path_factory):
    runs = tmp_path_factory.mktemp("zoom") / "runs"
    write_forge_run(runs / "forge-big", steps=BIG_ROWS, checkpoint_every=50_000)
    write_forge_run(runs / "forge-live", steps=2000, checkpoint_every=1000)
    proc, url = start_app(runs, "--refresh-ms", "1000")
    yield {"url": url, "runs": runs}
    proc.terminate()
    proc.wait(10)
    kill_runs(runs)


@pytest.fixture(scope="module")
def page(browser, cockpit):
    """One page for the module (a page load is the slow part); each test selects its run."""
    ctx, pg = new_page(browser)
    pg.goto(cockpit["url"])
    pg.wait_for_selector(f"#{ids.TRAINING_LOSS} .main-svg", timeout=TIMEOUT_MS)
    yield pg
    ctx.close()


def chart(page, pred, what: str, timeout_s: float = TIMEOUT_MS / 1000) -> dict:
    """Poll the loss chart until `pred` holds; returns what it showed."""
    deadline = time.monotonic() + timeout_s
    last = None
    while time.monotonic() < deadline:
        last = page.evaluate(CHART_JS)
        if last and last["x"] and pred(last):
            return last
        page.wait_for_timeout(150)
    brief = last and {k: (v if k != "x" else f"{len(v)} points, {v[:3]}...{v[-3:]}")
                      for k, v in last.items()}
    raise AssertionError(f"loss chart never {what}; last: {brief}")


def select_run(page, key: str, timeout_s: float = 30) -> None:
    """Pick `key` in the top bar's run selector (waiting for it to be listed)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        page.locator(f"#{common.RUN_SELECT}").click()
        option = page.locator(f".dash-dropdown-option:has(input[value='{key}'])")
        if option.count():
            option.click()
            page.keyboard.press("Escape")
            return
        page.keyboard.press("Escape")
        page.wait_for_timeout(500)
    raise AssertionError(f"{key} never listed in the run selector")


def inside(x: list, lo: float, hi: float) -> list:
    return [v for v in x if lo <= v <= hi]


def spacings(x: list) -> set:
    return {round(b - a, 6) for a, b in itertools.pairwise(x)}


def every_row(x: list, lo: float, hi: float, spacing: int) -> bool:
    """x holds every row from lo to hi, `spacing` steps apart (a full-resolution window)."""
    window = inside(x, lo, hi)
    return bool(window) and window[0] == lo and window[-1] == hi and spacings(window) == {spacing}


def held(view: dict, lo: float, hi: float) -> bool:
    return not view["auto"] and [round(v, 3) for v in view["range"]] == [lo, hi]


# -- a zoom on 200,000 rows --------------------------------------------------------------------
def test_zoom_on_a_200k_row_forge_run_is_full_resolution_and_holds_30_s(page, cockpit):
    select_run(page, "forge-big")
    lo, hi = 120_000.0, 120_400.0
    whole = chart(page, lambda v: "bits per token" in v["ytitle"] and max(v["x"]) == BIG_ROWS - 1
                  and v["auto"], "showed the whole 200k-row run")
    # unzoomed, the run is downsampled: a few points in [lo, hi], not one per row
    assert len(whole["x"]) <= 2 * 2000 and len(inside(whole["x"], lo, hi)) < 40
    assert page.is_checked(FOLLOW)
    bodies: list = []   # the chart's figure re-sent: Dash answers whose body names the chart
    page.on("response", lambda r: bodies.append(r) if "_dash-update-component" in r.url else None)

    page.evaluate(RELAYOUT_JS, [lo, hi])
    zoomed = chart(page, lambda v: held(v, lo, hi) and len(inside(v["x"], lo, hi)) > 100,
                   "re-aggregated the zoom")
    # every row in the window (Forge logs every step), plus a coarse overview outside it
    assert inside(zoomed["x"], lo, hi) == list(range(int(lo), int(hi) + 1))
    assert min(zoomed["x"]) < lo and max(zoomed["x"]) > hi
    assert not page.is_checked(FOLLOW)   # a zoom stops following the live edge
    shot(page, "forge_zoom_200k")
    page.wait_for_timeout(1500)          # the zoom's answers are in

    def chart_sends() -> list:
        return [r for r in bodies if r.status == 200 and f'"{ids.TRAINING_LOSS}"' in r.text()]

    assert chart_sends(), "the zoom's own figure patch must be seen (else this counts nothing)"
    del bodies[:]
    t0 = time.monotonic()
    checks = 0
    while time.monotonic() - t0 < HOLD_S:
        page.wait_for_timeout(3000)
        view = page.evaluate(CHART_JS)
        assert held(view, lo, hi), (round(time.monotonic() - t0, 1), view["range"], view["auto"])
        assert inside(view["x"], lo, hi) == list(range(int(lo), int(hi) + 1))
        assert not page.is_checked(FOLLOW)
        checks += 1
    assert checks >= 9
    assert bodies, "no Dash answer at all in 30 s: the page stopped refreshing"
    assert chart_sends() == [], [r.text()[:200] for r in chart_sends()]
    assert page.console_errors == []


# -- follow live on growing runs ---------------------------------------------------------------
@contextlib.contextmanager
def growing(runs, kind: str):
    """A run whose log keeps growing: Forge rows appended to log.csv by a thread (40 steps/s),
    or the simulator writing our run live (40 steps/s, a row every 10 steps). Yields (selector
    value, step spacing of its rows)."""
    if kind == "forge":
        folder = runs / "forge-live"
        stop = threading.Event()

        def grow():
            step = 2000
            while not stop.wait(0.25):
                append_forge_rows(folder, range(step, step + 10))
                step += 10

        t = threading.Thread(target=grow, daemon=True)
        t.start()
        try:
            yield "forge-live", 1
        finally:
            stop.set()
            t.join(5)
    else:
        sim = subprocess.Popen([sys.executable, "-m", "bin.simulate_training", "--out",
                                str(runs / "sim-live"), "--steps", "100000", "--live", "--rate",
                                "40", "--quiet"], cwd=ROOT)
        try:
            yield "sim-live", 10
        finally:
            sim.terminate()
            try:
                sim.wait(20)
            except subprocess.TimeoutExpired:
                sim.kill()
                sim.wait(10)


def newest(view: dict) -> float:
    return max(view["x"])


@pytest.mark.parametrize("kind", ["forge", "ours"])
def test_follow_live_on_off_on_a_growing_run(page, cockpit, kind):
    title = "bits per token" if kind == "forge" else "bits per byte"
    with growing(cockpit["runs"], kind) as (key, spacing):
        select_run(page, key)
        first = chart(page, lambda v: title in v["ytitle"] and len(v["x"]) >= 20
                      and newest(v) < BIG_ROWS - 1, f"drew {key}")   # not forge-big
        # another run drawn whole: the switch says it follows (the 200k test left it off)
        page.wait_for_function(f"document.querySelector('#{ids.TRAINING_FOLLOW}').checked",
                               timeout=TIMEOUT_MS)
        # follow live on: the x axis covers the whole run and grows with it
        start = newest(first)
        grown = chart(page, lambda v: v["auto"] and v["range"][1] >= start + 5 * spacing
                      and v["range"][0] <= min(v["x"]), "grew with the run")
        assert page.is_checked(FOLLOW)

        # a zoom turns follow live off; the range then holds while rows arrive
        xs = sorted(grown["x"])
        lo, hi = float(xs[len(xs) // 4]), float(xs[len(xs) // 2])
        page.evaluate(RELAYOUT_JS, [lo, hi])
        # ... redrawn from every row of the window (lo and hi are rows of the run)
        zoomed = chart(page, lambda v: held(v, lo, hi) and every_row(v["x"], lo, hi, spacing),
                       "re-aggregated the zoom")
        page.wait_for_function(f"() => !document.querySelector('{FOLLOW}').checked", timeout=TIMEOUT_MS)
        at_zoom, t0 = newest(zoomed), time.monotonic()
        view = zoomed
        # at least 3 refreshes, and until the page has GROW_STEPS new steps
        while newest(view) < at_zoom + GROW_STEPS or time.monotonic() - t0 < 3:
            assert time.monotonic() - t0 < TIMEOUT_MS / 1000, f"{key} stopped growing at {newest(view)}"
            page.wait_for_timeout(200)
            view = page.evaluate(CHART_JS)
            assert held(view, lo, hi), (view["range"], view["auto"], newest(view))
            assert every_row(view["x"], lo, hi, spacing)
            assert not page.is_checked(FOLLOW)
        shot(page, f"follow_off_{kind}")

        # follow live on again: back to the whole run, which keeps growing
        before = newest(view)
        page.locator(f"label[for='{ids.TRAINING_FOLLOW}']").click()
        chart(page, lambda v: v["auto"] and v["range"][0] <= min(v["x"])
              and v["range"][1] >= before, "went back to the whole run")
        chart(page, lambda v: v["auto"] and v["range"][1] >= before + 10 * spacing,
              "grew again after follow live came back on")
        assert page.is_checked(FOLLOW)

        # follow live off by hand holds the range shown now, while rows keep coming
        page.locator(f"label[for='{ids.TRAINING_FOLLOW}']").click()
        frozen = chart(page, lambda v: not v["auto"], "held the range when switched off")
        rng = [round(v, 3) for v in frozen["range"]]
        chart(page, lambda v: newest(v) >= newest(frozen) + 10 * spacing, "got new rows")
        view = page.evaluate(CHART_JS)
        assert not view["auto"] and [round(v, 3) for v in view["range"]] == rng
        page.locator(f"label[for='{ids.TRAINING_FOLLOW}']").click()
        chart(page, lambda v: v["auto"] and v["range"][1] > rng[1], "followed again")
    assert page.console_errors == []
