"""bench_gui's page drives the Training tab's callback as the app declares it: a first load draws
every chart, a tick after new rows sends a patch, an idle tick next to nothing."""
from bench.bench_gui import TICK_ROWS, Page, append, write_run
from umoec.run import RunDir


def test_the_bench_page_loads_ticks_and_idles(tmp_path):
    from gui.app import create_app
    run = RunDir(tmp_path / "big")
    write_run(run, 2_000)
    page = Page(create_app(tmp_path))
    _, first = page.refresh()
    assert page.state is not None and page.state["last_step"] == 2_000
    append(run, 2_001, TICK_ROWS)
    _, tick = page.refresh()
    assert page.state["last_step"] == 2_000 + TICK_ROWS and tick < first / 4
    _, idle = page.refresh()
    assert idle < tick
