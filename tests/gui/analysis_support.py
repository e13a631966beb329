"""Helpers for the analysis-tab tests (routing, MoD, activations, brain): runs in odd states, an
in-process Dash client, and a browser page on a cockpit process shared by one test module."""
from __future__ import annotations

import shutil
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from bench.bench_analysis import DashClient, run_config, write_run  # noqa: F401 (re-exported)
from gui import ids, panes
from gui.pages.header import ids as header_ids
from tests.conftest import ARTIFACTS
from tests.gui.browser_util import TIMEOUT_MS
from tests.gui.test_app_server import start_app
from umoec import config as C
from umoec.metrics import TrainingDB
from umoec.run import RunDir
from umoec.run.atomic import atomic_write_text


# -- runs in states the tabs must explain ---------------------------------------------------------
def metrics_only_run(root: Path, pattern: str = "Ss", mod: bool = True, steps: int = 30) -> RunDir:
    """A run that logged training metrics but none of the analysis tables (before the first eval)."""
    run = RunDir(root)
    root.mkdir(parents=True, exist_ok=True)
    atomic_write_text(run.config_path, C.dumps(run_config(1000, pattern, mod)))
    with TrainingDB(run.db_path) as db:
        db.insert_event("start", "test", step=0)
        for step in range(10, steps + 1, 10):
            db.insert_train_metrics(step, loss=1.0, bpb=1.4, lr=1e-3, grad_norm=1.0,
                                    tokens_per_sec=1.0, bytes_seen=step, elapsed_s=step)
    return run


def broken_run(root: Path) -> RunDir:
    """A run whose metrics.db is not a database at all."""
    run = RunDir(root)
    root.mkdir(parents=True, exist_ok=True)
    atomic_write_text(run.config_path, C.dumps(run_config(1000)))
    run.db_path.write_bytes(b"this is not an SQLite database\n" * 200)
    return run


# -- server side: call callbacks the way the browser does -----------------------------------------
@contextmanager
def dash_client(runs_dir: Path):
    from gui.app import create_app
    yield DashClient(create_app(runs_dir))


def controls(client: DashClient, first_output: str, tab: str, run: str | None, **state) -> tuple:
    """Fire a tab's per-tick callback; `state` maps "id.prop" (with - as _) to values."""
    values = {f"{header_ids.REFRESH}.n_intervals": 1, f"{ids.RUN_SELECT}.value": run,
              f"{ids.TABS}.active_tab": tab}
    values.update(state)
    return client.call(first_output, values, [f"{header_ids.REFRESH}.n_intervals"])


def message_text(resp: dict, message_id: str) -> str:
    """The text of an alert returned into `message_id` (empty when there is none)."""
    children = resp.get(message_id, {}).get("children")
    if not children:
        return ""
    inner = children["props"]["children"]
    return inner if isinstance(inner, str) else str(inner)


# -- browser --------------------------------------------------------------------------------------
@contextmanager
def cockpit(runs_dir: Path):
    """A cockpit process on `runs_dir` (refresh every second); stopped on exit."""
    proc, url = start_app(runs_dir, "--refresh-ms", "1000")
    try:
        yield url
    finally:
        proc.terminate()
        proc.wait(10)


@contextmanager
def browser_page(browser, url: str):
    """A fresh page on the cockpit that records console errors in page.console_errors."""
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = ctx.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    page.console_errors = []
    page.on("console", lambda m: page.console_errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: page.console_errors.append(str(e)))
    try:
        page.goto(url)
        yield page
    finally:
        ctx.close()


def copy_sim_run(sim_run: Path, runs_dir: Path) -> str:
    shutil.copytree(sim_run, runs_dir / sim_run.name)
    return sim_run.name


PANE_BUILT = """(id) => { const p = document.getElementById(id);
                        return !!p && !p.classList.contains('d-none') && p.innerText.trim().length > 0; }"""


def open_tab(page, label: str) -> None:
    """Click a tab and wait until its pane is built (a pane is built on its first show, one
    request later: the page cannot be used before it is there)."""
    tab = next(t for t, page in panes.PANES.items() if page.label == label)
    page.get_by_role("tab", name=label, exact=True).click()
    page.wait_for_function(PANE_BUILT, arg=ids.pane(tab), timeout=TIMEOUT_MS)


def wait_for_traces(page, graph_id: str, at_least: int = 1, timeout: float = TIMEOUT_MS / 1000) -> list[dict]:
    """Wait until a graph shows >= `at_least` traces; returns [{type, name}] of each."""
    script = f"""() => {{ const gd = document.querySelector('#{graph_id} .js-plotly-plot');
        return gd && gd.data ? gd.data.map(t => ({{type: t.type, name: t.name || ''}})) : []; }}"""
    deadline = time.monotonic() + timeout
    traces = []
    while time.monotonic() < deadline:
        traces = page.evaluate(script)
        if len(traces) >= at_least:
            return traces
        time.sleep(0.2)
    pytest.fail(f"#{graph_id} shows {len(traces)} traces, expected >= {at_least}")


def layout_title(page, graph_id: str) -> str:
    return page.evaluate(f"""() => {{ const gd = document.querySelector('#{graph_id} .js-plotly-plot');
        return gd && gd.layout && gd.layout.title ? (gd.layout.title.text || '') : ''; }}""")


def wait_until(predicate, timeout: float = 30.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.2)
    pytest.fail(f"timed out waiting for {what}")


def shot(page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)
