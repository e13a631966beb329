"""Compare tab: runs loaded (ours incrementally, Forge's from log.csv), the legend shows only the
hyperparameters that differ, the table and its CSV export, axes, zoom and follow live, and the
System chart (one system metric of every run)."""
import csv
import io
import math

import numpy as np
import pytest
from dash import Patch, no_update

from gui import ids
from gui.figures.compare import compare_fig, config_diff, legend_name, system_fig, system_options
from gui.pages.compare import ids as compare_ids
from gui.pages.compare.callbacks import compare_update, compare_zoom, system_update
from gui.pages.training import ids as training_ids
from gui.pages.training.zoom import track_redraws, training_zoom
from gui.services import compare
from tests.gui.forge_fixtures import write_forge_run
from umoec import config as C
from umoec.metrics import TrainingDB, read
from umoec.run import RunDir, RunStatus


def make_run(runs_dir, name, overrides=(), steps=range(10, 1001, 10), spike_at=None):
    run = RunDir(runs_dir / name)
    run.root.mkdir(parents=True)
    C.save(C.load_preset("tier1_micro", overrides), run.config_path)
    RunStatus(state="completed", step=steps[-1], total_steps=steps[-1], kind="simulate",
              message=f"{steps[-1]} steps").write(run.status_path)
    with TrainingDB(run.db_path) as db:
        db.insert_event("start", "start", step=0)
    add_rows(run, steps, spike_at)
    return run


def add_rows(run, steps, spike_at=None):
    with TrainingDB(run.db_path) as db, db.batch():
        for s in steps:
            bpb = 2.0 + 6.0 / math.sqrt(s) + (20.0 if s == spike_at else 0.0)
            db.insert_train_metrics(s, loss=bpb * math.log(2), bpb=bpb, lr=1e-3, grad_norm=1.0,
                                    tokens_per_sec=1000.0, bytes_seen=s * 4096, elapsed_s=s * 0.5)
            if s % 100 == 0:
                db.insert_val(s, loss=bpb, bpb=bpb + 0.1 - s / 1e5, n_bytes=100)


MIB = 2 ** 20


def add_system_rows(run, steps, cpu=50.0, gpu=False):
    """System samples as the trainer's recorder writes them (TrainingDB.insert_system_metrics);
    GPU columns stay NULL unless `gpu`, as on a CPU run."""
    with TrainingDB(run.db_path) as db, db.batch():
        for s in steps:
            db.insert_system_metrics(s, cpu_percent=cpu + s / 100, rss_bytes=(100 + s) * MIB,
                                     disk_free_bytes=10 * 2 ** 30, gpu_util=80.0 if gpu else None,
                                     gpu_mem_bytes=3 * 2 ** 30 if gpu else None)


@pytest.fixture
def runs(tmp_path):
    make_run(tmp_path, "base")
    make_run(tmp_path, "fast", ["optimizer.adamw.lr=0.001", "moe.top_k=1"])
    write_forge_run(tmp_path / "forge-a", steps=400, resume_from=250, resume_upto=320)
    return tmp_path


def test_legend_shows_only_the_differing_hyperparameters(runs):
    data, errors = compare.load_runs(runs, ["base", "fast", "forge-a"])
    assert errors == [] and [r.kind for r in data] == ["umoec", "umoec", "forge"]
    diff = config_diff(data)
    assert diff == {"umoec": ["moe.top_k", "optimizer.adamw.lr"], "forge": []}
    names = [legend_name(r, diff[r.kind]) for r in data]
    assert names[0] == "base: top_k=2, lr=0.003"
    assert names[1] == "fast: top_k=1, lr=0.001"
    assert names[2] == "forge-a (Forge, read-only) (bits/token)"
    fig, _notes = compare_fig(data, "step")
    legend = [t.name for t in fig.data if t.showlegend is not False]
    assert legend == names and not any("d_model" in n for n in legend)


def test_table_rows_and_csv_export(runs):
    data, _ = compare.load_runs(runs, ["base", "fast", "forge-a"])
    rows = compare.summary_rows(data, config_diff(data))
    base, fast, forge_row = rows
    assert base["steps"] == 1000 and base["bytes"] == 1000 * 4096 and base["time_s"] == 500.0
    assert base["best_val_step"] == 1000 and base["unit"] == "bits/byte"
    assert base["params"] > fast["params"] > 0    # umoec.sizing: dense FFNs are d_ff x (top_k + n_shared)
    assert base["moe.top_k"] == 2 and fast["optimizer.adamw.lr"] == 0.001
    assert forge_row["steps"] == 399 and forge_row["unit"] == "bits/token" and forge_row["params"] is None
    cols = compare.table_columns(rows)
    assert [c["id"] for c in cols][-2:] == ["moe.top_k", "optimizer.adamw.lr"]
    assert all(c["type"] == "numeric" for c in cols if c["id"] in ("steps", "best_val", "moe.top_k"))
    text = compare.table_csv(list(reversed(rows)), cols)      # the order the table shows
    parsed = list(csv.reader(io.StringIO(text)))
    assert parsed[0][:4] == ["run", "kind", "status", "steps"]
    assert [r[0] for r in parsed[1:]] == ["forge-a (Forge, read-only)", "fast", "base"]
    assert parsed[3][3] == "1000" and parsed[3][-2] == "2"     # ints stay ints
    assert parsed[1][6] == ""                                  # unknown params: empty, not "nan"


def test_axes_bytes_and_time_and_forge_units(runs, tmp_path):
    data, _ = compare.load_runs(runs, ["base", "forge-a"])
    fig, notes = compare_fig(data, "bytes")
    assert fig.layout.xaxis2.title.text == "training bytes"
    assert max(fig.data[1].x) == 1000 * 4096
    assert any("tokens, estimated" in n for n in notes)
    fig, notes = compare_fig(data, "time")
    assert max(fig.data[1].x) == 500.0 and notes == []
    # an older 6-column Forge log cannot be put on the time axis: said, not silently dropped
    write_forge_run(runs / "forge-old", steps=200, columns=6)
    data, _ = compare.load_runs(runs, ["base", "forge-old"])
    fig, notes = compare_fig(data, "time")
    assert any("forge-old" in n and "elapsed_s" in n for n in notes)
    assert len(fig.data) == 4                                  # base's four traces only


def test_live_run_is_read_incrementally_and_a_resume_reloads(runs):
    first = compare.load_run(runs, "base")
    assert compare.load_run(runs, "base") is first             # unchanged files: cached
    run = RunDir(runs / "base")
    add_rows(run, range(1010, 1101, 10))
    more = compare.load_run(runs, "base")
    assert more.step[-1] == 1100 and len(more.step) == 110 and len(more.val_step) == 11
    assert np.array_equal(more.step[:100], first.step)
    with TrainingDB(run.db_path) as db:                        # a resume rewrote rows
        db.discard_after(500)
        db.insert_event("resume", "resumed", step=500)
    again = compare.load_run(runs, "base")
    assert again.step[-1] == 500 and again.gen == 2


def test_best_val_marker_and_downsampled_long_runs(tmp_path):
    make_run(tmp_path, "long", steps=range(1, 20_001), spike_at=12_345)
    make_run(tmp_path, "short")
    data, _ = compare.load_runs(tmp_path, ["long", "short"])
    fig, _ = compare_fig(data, "step", n_out=1200)
    raw = fig.data[0]
    assert len(raw.x) <= 1204 and 12_345 in list(raw.x)       # peaks kept
    star = fig.data[3]
    assert star.marker.symbol == "star" and star.x[0] == 20_000
    zoomed, _ = compare_fig(data, "step", window=(12_000, 12_600), n_out=1200)
    shown = [x for x in zoomed.data[0].x if 12_000 <= x <= 12_600]
    assert len(shown) == 601                                   # every row of the window
    assert list(zoomed.layout.xaxis.range) == [12_000, 12_600]


def test_compare_update_flow_zoom_and_follow(runs):
    out = compare_update(runs, ["base", "fast"], "step", 0.6, False, None, compare_ids.COMPARE_RUNS, None)
    assert len(out["data"]) == 2 and len(out["figure"].data) == 8
    state = out["state"]
    idle = compare_update(runs, ["base", "fast"], "step", 0.6, False, None,
                          ids.tab_tick(ids.TAB_COMPARE), state)
    assert all(v is no_update for v in idle.values())         # nothing new: nothing sent
    zoom, follow = compare_zoom(compare_ids.COMPARE_GRAPH, {"xaxis.range[0]": 200, "xaxis.range[1]": 400},
                                True, state, None)
    assert zoom["window"] == [200.0, 400.0] and follow is False   # a zoom stops following
    # a zoom of the System chart below zooms the same window
    assert compare_zoom(compare_ids.COMPARE_SYSTEM_GRAPH, {"xaxis.range[0]": 200, "xaxis.range[1]": 400},
                        True, state, None) == (zoom, False)
    zoomed = compare_update(runs, ["base", "fast"], "step", 0.6, False, zoom, compare_ids.COMPARE_ZOOM, state)
    assert list(zoomed["figure"].layout.xaxis.range) == [200, 400]
    assert "drawn from every row" in str(zoomed["message"])
    assert compare_zoom(compare_ids.COMPARE_GRAPH, {"autosize": True}, False, state, zoom) == (no_update,
                                                                                       no_update)
    reset, _ = compare_zoom(compare_ids.COMPARE_GRAPH, {"xaxis.autorange": True}, False, state, zoom)
    assert reset["window"] is None
    held, _ = compare_zoom(compare_ids.COMPARE_FOLLOW, None, False, zoomed["state"], reset)
    assert held["window"] == [10.0, 1000.0]                    # follow off: hold today's extent
    back, _ = compare_zoom(compare_ids.COMPARE_FOLLOW, None, True, zoomed["state"], held)
    assert back["window"] is None
    # back to the whole runs: autorange said outright, under an x uirevision that differs from
    # the zoomed one, so plotly cannot keep the range the user dragged
    whole = compare_update(runs, ["base", "fast"], "step", 0.6, False, back, compare_ids.COMPARE_ZOOM,
                           zoomed["state"])["figure"].layout.xaxis
    assert whole.autorange is True and whole.uirevision != zoomed["figure"].layout.xaxis.uirevision
    other = compare_update(runs, ["base"], "time", 0.6, False, zoom, compare_ids.COMPARE_AXIS, state)
    assert other["figure"].layout.xaxis.autorange is not False  # a zoom of other runs is dropped
    assert "at least one more" in str(other["message"])
    empty = compare_update(runs, [], "step", 0.6, False, None, compare_ids.COMPARE_RUNS, None)
    assert empty["data"] == []
    missing = compare_update(runs, ["base", "gone"], "step", 0.6, False, None, compare_ids.COMPARE_RUNS, None)
    assert "gone: no such run" in str(missing["message"]) and len(missing["data"]) == 1
    many = compare_update(runs, ["base"] * 9, "step", 0.6, True, None, compare_ids.COMPARE_RUNS, None)
    assert "first 8 of the 9" in str(many["message"])
    assert many["figure"].layout.yaxis.type == "log"


def test_training_chart_zoom_follow_and_redraw(tmp_path):
    make_run(tmp_path, "long", steps=range(1, 8001), spike_at=4321)
    chart = {"run": "long", "gen": 1, "smoothing": 0.6, "log_y": False, "points": 2000,
             "last_step": 8000}
    out = training_zoom(tmp_path, "long", training_ids.TRAINING_LOSS,
                        {"xaxis.range[0]": 4000, "xaxis.range[1]": 4500}, True, chart, None)
    assert out["follow"] is False and out["zoom"] == {"run": "long", "window": [4000.0, 4500.0]}
    ops = out["figure"].to_plotly_json()["operations"]
    xs = next(o["params"]["value"] for o in ops if o["location"] == ["data", 0, "x"])
    assert len([x for x in xs if 4000 <= x <= 4500]) == 501 and 4321 in xs
    ema_y = next(o["params"]["value"] for o in ops if o["location"] == ["data", 1, "y"])
    assert len(ema_y) == len(xs)
    follow = training_zoom(tmp_path, "long", training_ids.TRAINING_FOLLOW, None, True, chart, out["zoom"])
    assert follow["zoom"]["window"] is None
    assert any(o["location"] == ["layout", "xaxis", "autorange"] and o["params"]["value"] is True
               for o in follow["figure"].to_plotly_json()["operations"])
    held = training_zoom(tmp_path, "long", training_ids.TRAINING_FOLLOW, None, False, chart, follow["zoom"])
    assert held["zoom"]["window"] == [1.0, 8000.0]
    # the training callback redrew from scratch (smoothing changed): the zoom is re-applied
    fig, seen = track_redraws(tmp_path, "long", chart, out["zoom"], None)
    assert seen["points"] == 2000
    fig, seen = track_redraws(tmp_path, "long", chart, out["zoom"], seen)
    assert fig is no_update                                    # plain tick: nothing to do
    fig, seen = track_redraws(tmp_path, "long", {**chart, "smoothing": 0.9}, out["zoom"], seen)
    assert fig is not no_update
    fig, _ = track_redraws(tmp_path, "long", {**chart, "run": "other"}, out["zoom"], seen)
    # another run: its first draw is a whole new figure, shown whole; a reset sent from here
    # would read the zoom store as it was when the draw was queued and could undo a zoom made
    # on the new run meanwhile (the chart then stayed whole, follow live off)
    assert fig is no_update


def layout_ops(patch) -> dict:
    return {tuple(o["location"][1:]): o["params"]["value"]
            for o in patch.to_plotly_json()["operations"] if o["location"][0] == "layout"}


def test_zoom_fits_y_to_the_window_and_a_double_click_follows_again(tmp_path):
    make_run(tmp_path, "long", steps=range(1, 8001), spike_at=4321)
    chart = {"run": "long", "gen": 1, "smoothing": 0.6, "log_y": False, "points": 2000}
    late = training_zoom(tmp_path, "long", training_ids.TRAINING_LOSS,
                         {"xaxis.range[0]": 6000, "xaxis.range[1]": 6500}, True, chart, None)
    lo, hi = layout_ops(late["figure"])[("yaxis", "range")]
    # bpb there is 2 + 6/sqrt(step): 2.0744..2.0775, not the run's 2.07..24 (start and spike)
    assert 2.0740 < lo < 2.0744 and 2.0775 < hi < 2.0780
    assert layout_ops(late["figure"])[("yaxis", "autorange")] is False
    logged = training_zoom(tmp_path, "long", training_ids.TRAINING_LOSS,
                           {"xaxis.range[0]": 6000, "xaxis.range[1]": 6500}, True,
                           {**chart, "log_y": True}, None)
    lo, hi = layout_ops(logged["figure"])[("yaxis", "range")]
    assert 0.3166 < lo < 0.3169 and 0.3175 < hi < 0.3178          # log10 units on a log axis
    box = training_zoom(tmp_path, "long", training_ids.TRAINING_LOSS,
                        {"xaxis.range[0]": 6000, "xaxis.range[1]": 6500,
                         "yaxis.range[0]": 0.0, "yaxis.range[1]": 1.0}, True, chart, None)
    assert ("yaxis", "range") not in layout_ops(box["figure"])    # the user's own y range
    reset = training_zoom(tmp_path, "long", training_ids.TRAINING_LOSS, {"xaxis.autorange": True}, False,
                          chart, late["zoom"])
    assert reset["follow"] is True and reset["zoom"]["window"] is None
    assert layout_ops(reset["figure"])[("yaxis", "autorange")] is True
    # a zoom made on a newly picked run before its first draw came back is kept, not reset
    fig, _ = track_redraws(tmp_path, "long", chart, late["zoom"], {"run": "other", "chart": None,
                                                                   "points": 10})
    assert layout_ops(fig)[("xaxis", "range")] == [6000.0, 6500.0]


def test_units_on_the_y_axis_and_no_made_up_values_in_legends(runs):
    """The y axis says bits per token when Forge runs are drawn; a Forge run without
    config.json gets no 'lr=none' in its legend."""
    import json
    data, _ = compare.load_runs(runs, ["base", "fast"])
    assert compare_fig(data, "step")[0].layout.yaxis.title.text == "bits per byte"
    data, _ = compare.load_runs(runs, ["base", "forge-a"])
    assert "per token for Forge runs" in compare_fig(data, "step")[0].layout.yaxis.title.text
    for name, lr in (("forge-b", 0.001), ("forge-c", 0.002)):
        write_forge_run(runs / name, steps=100)
        (runs / name / "config.json").write_text(json.dumps({"lr": lr, "name": name}))
    data, _ = compare.load_runs(runs, ["forge-a", "forge-b", "forge-c"])
    fig, _ = compare_fig(data, "step")
    assert fig.layout.yaxis.title.text == "bits per token (Forge)"
    diff = config_diff(data)
    names = [legend_name(r, diff[r.kind]) for r in data]
    assert "none" not in names[0] and names[0] == "forge-a (Forge, read-only) (bits/token)"
    assert "lr=0.001" in names[1] and "lr=0.002" in names[2]


# -- System chart ----------------------------------------------------------------------------------
@pytest.fixture
def system_runs(runs):
    """gpu: samples with GPU columns; cpu: CPU-only samples; base (already in `runs`): none,
    like a run made before the sampler existed; forge-a: a Forge run (never any)."""
    add_system_rows(make_run(runs, "gpu", ["moe.top_k=1"]), range(10, 1001, 10), cpu=200.0, gpu=True)
    add_system_rows(make_run(runs, "cpu"), range(10, 1001, 10))
    return runs


def test_the_loader_reads_system_rows_with_the_curves_and_incrementally(system_runs):
    gpu = compare.load_run(system_runs, "gpu")
    assert list(gpu.system) == ["step", *read.SYSTEM_SERIES] and len(gpu.system["step"]) == 100
    assert gpu.system["cpu_percent"][0] == 200.1 and gpu.system["gpu_mem_bytes"][-1] == 3 * 2 ** 30
    cpu = compare.load_run(system_runs, "cpu")
    assert np.isnan(cpu.system["gpu_util"]).all()             # NULL stays missing, never 0
    assert compare.load_run(system_runs, "base").system == {}
    assert compare.load_run(system_runs, "forge-a").system == {}
    run = RunDir(system_runs / "cpu")
    add_rows(run, range(1010, 1051, 10))
    add_system_rows(run, range(1010, 1051, 10))
    more = compare.load_run(system_runs, "cpu")
    assert more.system["step"][-1] == 1050 and len(more.system["step"]) == 105
    assert np.array_equal(more.system["rss_bytes"][:100], cpu.system["rss_bytes"])


def test_system_chart_overlays_the_runs_in_their_loss_chart_colours(system_runs):
    data, _ = compare.load_runs(system_runs, ["gpu", "base", "cpu", "forge-a"])
    assert system_options(data) == ["cpu_percent", "rss_bytes", "gpu_util", "gpu_mem_bytes",
                                    "disk_free_bytes"]
    assert system_options([d for d in data if d.key != "gpu"]) == ["cpu_percent", "rss_bytes",
                                                                   "disk_free_bytes"]
    loss, _ = compare_fig(data, "step")
    loss_colour = {t.name: t.line.color for t in loss.data if t.showlegend is not False}
    fig, notes = system_fig(data, "cpu_percent")
    assert [t.name for t in fig.data] == ["gpu: top_k=1", "cpu: top_k=2"]
    assert [t.line.color for t in fig.data] == [loss_colour[t.name] for t in fig.data]
    assert fig.data[0].y[0] == 200.1 and fig.layout.yaxis.title.text == "CPU (% of one core)"
    assert notes == ["base: no system metrics (the run predates the sampler)",
                     "forge-a (Forge, read-only): no system metrics (Forge runs log none)"]
    rss, _ = system_fig(data, "rss_bytes", "time")
    assert rss.data[1].y[-1] == 1100.0 and rss.layout.yaxis.title.text == "resident memory (MiB)"
    assert rss.data[1].x[-1] == 500.0 and rss.layout.xaxis.title.text == "wall time (s)"
    gpu, notes = system_fig(data, "gpu_util")
    assert [t.name for t in gpu.data] == ["gpu: top_k=1"] and "cpu: no GPU util % recorded" in notes
    disk, _ = system_fig(data, "disk_free_bytes")
    assert disk.data[0].y[0] == 10.0


def test_system_chart_says_when_no_picked_run_recorded_any(system_runs):
    data, _ = compare.load_runs(system_runs, ["base", "forge-a"])
    assert system_options(data) == []
    fig, notes = system_fig(data, "cpu_percent")
    assert fig.data == () and notes == []
    assert "None of the picked runs recorded system metrics" in fig.layout.annotations[0].text


def test_long_system_series_are_downsampled_with_their_peaks(tmp_path):
    run = make_run(tmp_path, "long", steps=range(1, 5001))
    add_system_rows(run, range(1, 5001))
    with TrainingDB(run.db_path) as db:
        db.insert_system_metrics(3333, cpu_percent=900.0)
    data, _ = compare.load_runs(tmp_path, ["long"])
    fig, _ = system_fig(data, "cpu_percent", n_out=500)
    assert len(fig.data[0].x) <= 504 and 3333 in fig.data[0].x and max(fig.data[0].y) == 900.0


def test_system_update_redraws_only_when_runs_metric_or_samples_change(system_runs, monkeypatch):
    keys = ["gpu", "cpu", "base"]
    start = system_update(system_runs, None, "cpu_percent", None)
    assert "Pick runs" in start["figure"].layout.annotations[0].text and start["options"] == []
    out = compare_update(system_runs, keys, "step", 0.6, False, None, compare_ids.COMPARE_RUNS, None)
    with monkeypatch.context() as m:      # the loss chart just read the runs: no read of its own
        m.setattr(compare.read, "open_db", lambda *_: pytest.fail("System chart opened metrics.db"))
        first = system_update(system_runs, out["state"], "cpu_percent", start["seen"])
    assert len(first["figure"].data) == 2 and first["value"] is no_update
    assert [o["label"] for o in first["options"]] == ["CPU %", "RSS MiB", "GPU util %", "GPU memory MiB",
                                                      "disk free GiB"]
    assert "base: no system metrics" in str(first["note"])
    assert all(v is no_update for v in system_update(system_runs, out["state"], "cpu_percent",
                                                     first["seen"]).values())
    # a smoothing change redraws the loss chart, not this one
    smoother = compare_update(system_runs, keys, "step", 0.9, False, None, compare_ids.COMPARE_SMOOTHING,
                              out["state"])
    assert smoother["state"] != out["state"]
    assert all(v is no_update for v in system_update(system_runs, smoother["state"], "cpu_percent",
                                                     first["seen"]).values())
    # a zoom moves its x range only (a Patch of the layout), and back to the whole runs
    zoom = {"runs": keys, "axis": "step", "window": [200.0, 400.0]}
    zoomed = system_update(system_runs, out["state"], "cpu_percent", first["seen"], zoom)
    assert isinstance(zoomed["figure"], Patch) and zoomed["options"] is no_update
    ops = zoomed["figure"].to_plotly_json()["operations"]
    assert {"operation": "Assign", "location": ["layout", "xaxis", "range"],
            "params": {"value": [200.0, 400.0]}} in ops
    unzoomed = system_update(system_runs, out["state"], "cpu_percent", zoomed["seen"], None)
    assert {"operation": "Assign", "location": ["layout", "xaxis", "autorange"],
            "params": {"value": True}} in unzoomed["figure"].to_plotly_json()["operations"]
    # a zoom of other runs or another axis is not this chart's
    other = {"runs": ["cpu"], "axis": "step", "window": [1.0, 2.0]}
    assert all(v is no_update for v in system_update(system_runs, out["state"], "cpu_percent",
                                                     first["seen"], other).values())
    # drawn afresh (another metric) inside the window
    fresh = system_update(system_runs, out["state"], "rss_bytes", zoomed["seen"], zoom)
    assert list(fresh["figure"].layout.xaxis.range) == [200.0, 400.0]
    rss = system_update(system_runs, out["state"], "rss_bytes", first["seen"])
    assert rss["figure"].layout.yaxis.title.text == "resident memory (MiB)"
    # new samples of a picked run: drawn
    run = RunDir(system_runs / "cpu")
    add_rows(run, [1010])
    add_system_rows(run, [1010])
    grown = system_update(system_runs, out["state"], "rss_bytes", rss["seen"])
    assert grown["figure"].data[1].x[-1] == 1010
    # a metric none of the runs has (GPU, after the GPU run is dropped): the first they have
    cpu_only = compare_update(system_runs, ["cpu", "base"], "step", 0.6, False, None,
                              compare_ids.COMPARE_RUNS, out["state"])
    fallback = system_update(system_runs, cpu_only["state"], "gpu_util", grown["seen"])
    assert fallback["value"] == "cpu_percent" and len(fallback["figure"].data) == 1
    assert "gpu_util" not in [o["value"] for o in fallback["options"]]
    nothing = compare_update(system_runs, ["base", "forge-a"], "step", 0.6, False, None,
                             compare_ids.COMPARE_RUNS, out["state"])
    empty = system_update(system_runs, nothing["state"], "cpu_percent", fallback["seen"])
    assert "None of the picked runs" in empty["figure"].layout.annotations[0].text
    assert empty["options"] == []
