"""visible_only: a tab's callbacks do nothing while another tab is shown (through Dash's endpoint,
as the browser calls them), and a callback that cannot know the shown tab says so."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from dash import Dash, Input, Output, dcc, html

from bench.bench_analysis import DashClient, write_run
from gui import ids as common
from gui.components.visible import visible_only
from gui.pages.runs import ids

GUI = Path(__file__).parents[3] / "gui"
TICK = f"{common.tab_tick(common.TAB_RUNS)}.data"


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    from gui.app import create_app
    runs = tmp_path_factory.mktemp("visible-runs")
    write_run(runs / "alpha", 200)
    return DashClient(create_app(runs))


def runs_table(client, shown):
    return client.call(f"{ids.RUNS_TABLE}.data", {TICK: 1, f"{common.TABS}.active_tab": shown,
                                                  f"{ids.RUNS_TABLE}.data": None}, [TICK])


def test_a_hidden_tab_reads_nothing_and_the_shown_tab_redraws(client):
    assert runs_table(client, common.TAB_TRAINING)[0] == 204
    assert runs_table(client, None)[0] == 204          # unset: the first tab (Training) shows
    status, resp = runs_table(client, common.TAB_RUNS)
    assert status == 200 and [r["run"] for r in resp[ids.RUNS_TABLE]["data"]] == ["alpha"]


def toy_app(with_tabs: bool, unless: str | None = None) -> DashClient:
    app = Dash(__name__)
    app.layout = html.Div([dcc.Store(id="go"), dcc.Store(id="out"), dcc.Store(id="other"),
                           dcc.Tabs(id=common.TABS)])
    inputs = [Input("go", "data"), Input("other", "data")]
    if with_tabs:
        inputs.append(Input(common.TABS, "active_tab"))

    @app.callback(Output("out", "data"), *inputs)
    @visible_only(common.TAB_RUNS, unless=unless)
    def fill(go, *_rest):
        return go
    return DashClient(app)


def test_unless_lets_one_input_through_while_hidden():
    client = toy_app(True, unless="other")
    values = {"go.data": 7, "other.data": 1, f"{common.TABS}.active_tab": common.TAB_TRAINING}
    assert client.call("out.data", values, ["go.data"])[0] == 204
    status, resp = client.call("out.data", values, ["other.data"])
    assert status == 200 and resp["out"]["data"] == 7


def test_a_callback_without_the_tab_input_fails_loudly():
    with pytest.raises(RuntimeError, match="HTTP 500"):
        toy_app(False).call("out.data", {"go.data": 1}, ["go.data"])


def test_no_page_writes_its_own_tab_guard():
    """One rule, one place: a hand-written `if tab != TAB_X` would drift from it."""
    guard = re.compile(r"if\s+\w+\s*(!=|not in)\s*\(?\s*(None,\s*)?(common|ids)\.TAB_")
    found = [f"{p.relative_to(GUI)}:{n}" for p in GUI.rglob("*.py")
             for n, line in enumerate(p.read_text().splitlines(), 1) if guard.search(line)]
    assert found == []
