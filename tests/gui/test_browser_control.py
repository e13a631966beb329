"""Training control in headless Chromium, with the live simulator as the training process:
Start -> Running (KPIs and log tail move) -> Stop -> Stopped -> Resume -> Running -> Stop, the
sidebar's values reach the run's config, and a killed process shows Crashed (exit code -9).
"""
import json
import os
import signal

import pytest

from tests.gui.browser_util import TIMEOUT_MS, kill_runs, new_page, open_section, set_field, shot, wait_text
from tests.gui.test_app_server import start_app
from umoec import config as C
from umoec.run import RunDir

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def cockpit(tmp_path_factory):
    runs = tmp_path_factory.mktemp("ctl-runs")
    proc, url = start_app(runs, "--refresh-ms", "500", "--stop-timeout", "20")
    yield url, runs
    kill_runs(runs)
    proc.terminate()
    proc.wait(10)


@pytest.fixture
def page(browser, cockpit):
    ctx, pg = new_page(browser)
    pg.goto(cockpit[0])
    wait_text(pg, "#config-validation", "Config valid.")
    # the first status tick sets the runner (bin.train when it exists); choose the simulator after
    pg.wait_for_function("document.querySelector('#config-status').innerText.length > 0",
                         timeout=TIMEOUT_MS)
    pg.locator("#config-runner label:text-is('Simulate (live)')").click()
    yield pg
    ctx.close()


def start(page, name: str, **fields) -> None:
    open_section(page, "Training")
    for cid, value in fields.items():
        set_field(page, cid, value)
    page.fill("#config-run-name", name)
    page.fill("#config-sim-rate", "20")
    page.click("#config-start-btn")
    wait_text(page, "#config-status", "Running")


def test_start_stop_resume_cycle(page, cockpit):
    runs = cockpit[1]
    open_section(page, "MoE")
    set_field(page, "config-moe-top-k", 3)
    start(page, "ctl", **{"config-training-steps": 100000})
    run = RunDir(runs / "ctl")
    frozen = C.load(run.config_path)  # what the process actually runs with
    assert frozen.moe.top_k == 3 and frozen.training.steps == 100000

    first = wait_text(page, "#training-kpi-cards", "of 100,000")
    page.wait_for_function(f"document.querySelector('#training-kpi-cards').innerText !== {json.dumps(first)}",
                           timeout=TIMEOUT_MS)
    wait_text(page, "#training-log-tail", "| loss")
    wait_text(page, "#config-status", "steps/s")
    shot(page, "control_running")

    # Stop asks first: a dismissed dialog stops nothing, an accepted one stops the run
    dialogs = []
    page.once("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.click("#config-stop-btn")
    page.wait_for_timeout(1500)
    assert dialogs and dialogs[0].startswith("Stop run ctl?"), dialogs
    assert run.read_status().state == "running"
    page.once("dialog", lambda d: d.accept())
    page.click("#config-stop-btn")
    wait_text(page, "#config-status", "Stopped")
    assert run.read_status().state == "stopped" and run.read_status().exit_code == 0
    stopped_at = run.read_status().step

    page.wait_for_selector("#resume-btn:not([disabled])", timeout=TIMEOUT_MS)
    page.click("#resume-btn")
    wait_text(page, "#config-status", "Resuming ctl from step")
    wait_text(page, "#config-status", "Running")
    page.wait_for_function("/step [0-9,]+\\//.test(document.querySelector('#config-status').innerText)",
                           timeout=TIMEOUT_MS)
    page.once("dialog", lambda d: d.accept())
    page.click("#config-stop-btn")
    wait_text(page, "#config-status", "Stopped")
    assert run.read_status().step >= stopped_at
    shot(page, "control_stopped_after_resume")
    assert page.console_errors == []


def test_killed_process_shows_crashed_with_exit_code(page, cockpit):
    runs = cockpit[1]
    start(page, "doomed", **{"config-training-steps": 100000})
    pid = json.loads((runs / "doomed" / "status.json").read_text())["pid"]
    os.kill(pid, signal.SIGKILL)
    text = wait_text(page, "#config-status", "Crashed (exit code -9")
    assert "SIGKILL" in text
    wait_text(page, "#run-status", "Crashed (exit code -9")
    shot(page, "control_crashed")
    assert page.console_errors == []


def test_restarted_cockpit_reattaches_and_stops_the_run(browser, tmp_path):
    first, url = start_app(tmp_path, "--refresh-ms", "500")
    try:
        ctx, pg = new_page(browser)
        pg.goto(url)
        wait_text(pg, "#config-validation", "Config valid.")
        pg.wait_for_function("document.querySelector('#config-status').innerText.length > 0",
                             timeout=TIMEOUT_MS)
        pg.locator("#config-runner label:text-is('Simulate (live)')").click()
        start(pg, "survivor", **{"config-training-steps": 100000})
        ctx.close()
        first.terminate()  # the cockpit goes away; the run does not
        first.wait(10)
        second, url = start_app(tmp_path, "--refresh-ms", "500")
        try:
            ctx, pg = new_page(browser)
            pg.goto(url)
            wait_text(pg, "#config-status", "Running")
            page_status = wait_text(pg, "#run-status", "Running")
            assert "survivor" in pg.inner_text("#config-status"), page_status
            pg.wait_for_selector("#config-stop-btn:not([disabled])", timeout=TIMEOUT_MS)
            # this cockpit did not start the run: stopping it is the adopted-process path (its
            # "SIGTERM sent ... started before this cockpit" note shows only until the status
            # says Stopped, which on a slow machine comes first)
            pg.once("dialog", lambda d: d.accept())
            pg.click("#config-stop-btn")
            wait_text(pg, "#config-status", "stopped by signal 15")
            assert RunDir(tmp_path / "survivor").read_status().exit_code == 0
            assert pg.console_errors == []
            ctx.close()
        finally:
            second.terminate()
            second.wait(10)
    finally:
        kill_runs(tmp_path)
        if first.poll() is None:
            first.terminate()
            first.wait(10)
