"""Helpers shared by the cockpit's browser tests (Playwright driving Debian chromium)."""
from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import psutil

from tests.conftest import ARTIFACTS

# what a wait on the page allows: on a slow 2-core machine (AVX2-only EPYC, measured) the page
# shows its first status 15 s after load while a simulated run trains beside it
TIMEOUT_MS = 90_000

# the shown tab's pane (gui/panes.py) has been built and shows something
SHOWN_PANE_HAS_TEXT = """() => { const p = document.querySelector('.cockpit-pane:not(.d-none)');
                                 return !!p && p.innerText.trim().length > 0; }"""


def new_page(browser, width: int = 1500, height: int = 1100):
    """A page in a fresh context (empty localStorage) that records console errors."""
    ctx = browser.new_context(viewport={"width": width, "height": height})
    page = ctx.new_page()
    page.set_default_timeout(TIMEOUT_MS)   # clicks, fills and waits without their own timeout
    page.console_errors = []
    page.scripts = []           # every script the page asked for
    page.on("request", lambda r: page.scripts.append(r.url) if r.resource_type == "script" else None)
    page.on("console", lambda m: page.console_errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: page.console_errors.append(str(e)))
    return ctx, page


def shot(page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def open_section(page, title: str) -> None:
    """Expand one accordion section of the config sidebar (no-op if it is open)."""
    button = page.locator(f"#config-accordion .accordion-button:text-is('{title}')")
    if "collapsed" in (button.get_attribute("class") or ""):
        button.click()
    page.wait_for_timeout(350)  # Bootstrap's collapse transition


def set_field(page, component_id: str, value) -> None:
    """Type into a config field and let its debounce fire."""
    box = page.locator(f"#{component_id}")
    box.fill(str(value))
    box.press("Tab")
    page.wait_for_timeout(450)


def wait_text(page, selector: str, text: str, timeout_ms: int = TIMEOUT_MS) -> str:
    """Wait until `selector`'s text contains `text`; returns the text."""
    deadline = time.monotonic() + timeout_ms / 1000
    last = ""
    while time.monotonic() < deadline:
        try:
            last = page.inner_text(selector, timeout=1000)
        except Exception:  # not attached yet
            last = ""
        if text in last:
            return last
        page.wait_for_timeout(200)
    raise AssertionError(f"{selector} never showed {text!r}; last text: {last!r}")


def kill_runs(runs_dir: Path) -> None:
    """Kill every process a test left running in runs_dir (runs outlive the cockpit by design)."""
    for path in list(runs_dir.glob("*/status.json")) + list(runs_dir.glob("*/launch.json")):
        try:
            pid = int(json.loads(path.read_text()).get("pid") or 0)
        except (OSError, ValueError):
            continue
        try:  # only our own trainer/simulator processes (never a recycled pid)
            if pid <= 0 or "bin." not in " ".join(psutil.Process(pid).cmdline()):
                continue
            os.killpg(pid, signal.SIGKILL)
        except (psutil.Error, ProcessLookupError, PermissionError):
            pass
