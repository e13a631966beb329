"""The training tab's refresh (training_update): a full draw once, then only new rows as a
dash.Patch; the smoothing (EMA, running mean, clipped or not) continued exactly; tokens/s drawn
and extended with the rest; long runs downsampled with their peaks; redraw on resume."""
import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from dash import no_update

from gui.figures.series import MAX_POINTS, Smoothing, ema, smooth
from gui.pages.training.callbacks import training_update
from umoec.metrics import TrainingDB
from umoec.run import RunDir, RunStatus


def make_run(runs_dir, name="r", steps=range(1, 101), spike_at=None):
    run = RunDir(runs_dir / name)
    run.root.mkdir(parents=True)
    RunStatus(state="completed", total_steps=10**6, kind="simulate").write(run.status_path)
    add_rows(run, steps, spike_at)
    with TrainingDB(run.db_path) as db:
        db.insert_event("start", "start", step=0)
    run.log_path.write_text("step 1 | loss 5\n")
    return run


def bpb_at(s, spike_at=None):
    return 8.0 / math.sqrt(s) + 0.01 * math.sin(s) + (50.0 if s == spike_at else 0.0)


def add_rows(run, steps, spike_at=None):
    with TrainingDB(run.db_path) as db, db.batch():
        for s in steps:
            bpb = bpb_at(s, spike_at)
            db.insert_train_metrics(s, loss=bpb * math.log(2), bpb=bpb, lr=1e-3, grad_norm=1.0,
                                    tokens_per_sec=1000.0 + s, bytes_seen=s * 4096,
                                    elapsed_s=s * 0.1)
            if s % 50 == 0:
                db.insert_val(s, loss=bpb, bpb=bpb / (1 + s / 1000), n_bytes=100)


def operations(patch):
    return patch.to_plotly_json()["operations"]


def extended(patch, trace, axis):
    for op in operations(patch):
        if op["operation"] == "Extend" and op["location"] == ["data", trace, axis]:
            return op["params"]["value"]
    return None


def test_first_load_then_only_new_rows_as_a_patch(tmp_path):
    run = make_run(tmp_path)
    first = training_update(tmp_path, "r", 0.6, False, None)
    assert first["error"] is None and first["state"]["last_step"] == 100
    assert [t.name for t in first["loss"].data][:3] == ["train bpb", "train bpb (EMA 0.60)", "val bpb"]

    assert list(first["throughput"].data[0].y) == [1000.0 + s for s in range(1, 101)]

    idle = training_update(tmp_path, "r", 0.6, False, first["state"])
    assert idle["loss"] is no_update and idle["lr"] is no_update
    assert idle["throughput"] is no_update
    assert idle["log"] is no_update  # training.log unchanged: not sent again

    add_rows(run, range(101, 121))
    tick = training_update(tmp_path, "r", 0.6, False, idle["state"])
    assert extended(tick["loss"], 0, "x") == list(range(101, 121))
    assert extended(tick["lr"], 1, "x") == list(range(101, 121))
    assert extended(tick["throughput"], 0, "y") == [1000.0 + s for s in range(101, 121)]
    all_bpb = pd.Series([bpb_at(s) for s in range(1, 121)])
    assert np.isclose(extended(tick["loss"], 1, "y")[-1], ema(all_bpb.to_numpy(), 0.6)[-1])
    assert tick["state"]["last_step"] == 120
    # a new best validation point moves the star
    assert extended(tick["loss"], 2, "x") is None
    add_rows(run, range(121, 151))
    tick2 = training_update(tmp_path, "r", 0.6, False, tick["state"])
    assert extended(tick2["loss"], 2, "x") == [150]
    star = [op for op in operations(tick2["loss"]) if op["location"] == ["data", 3, "name"]]
    assert star and star[0]["params"]["value"].startswith("best val")


def test_smoothing_log_y_and_resume_force_a_full_redraw(tmp_path):
    run = make_run(tmp_path)
    state = training_update(tmp_path, "r", 0.6, False, None)["state"]
    assert training_update(tmp_path, "r", 0.9, False, state)["loss"].data[1].name.endswith("0.90)")
    assert training_update(tmp_path, "r", 0.6, True, state)["loss"].layout.yaxis.type == "log"
    with TrainingDB(run.db_path) as db:  # a resume rewrote rows after its checkpoint
        db.discard_after(80)
        db.insert_event("resume", "resumed", step=80)
    redrawn = training_update(tmp_path, "r", 0.6, False, state)
    assert redrawn["state"]["last_step"] == 80 and hasattr(redrawn["loss"], "data")


def test_the_smoothing_method_and_clipping_redraw_then_continue_exactly(tmp_path):
    run = make_run(tmp_path, steps=range(1, 101), spike_at=60)
    state = training_update(tmp_path, "r", 0.6, False, None)["state"]
    mean = training_update(tmp_path, "r", 0.9, False, state, method="mean", clip=True)
    assert mean["loss"].data[1].name == "train bpb (mean of 10, clipped)"    # redrawn
    near_spike = mean["loss"].data[1].y[59:70]                   # steps 60..69, bpb about 1.0
    assert max(near_spike) < 1.1 and max(mean["loss"].data[0].y) > 50    # the raw trace unclipped
    assert training_update(tmp_path, "r", 0.9, False, mean["state"], method="mean",
                           clip=True)["loss"] is no_update
    none = training_update(tmp_path, "r", 0.9, False, mean["state"], method="none")
    assert none["loss"].data[1].name == "train bpb (unsmoothed)"
    assert list(none["loss"].data[1].y) == list(none["loss"].data[0].y)
    # live rows, a spike among them: the patched line is the one a full draw gives
    add_rows(run, range(101, 131), spike_at=115)
    tick = training_update(tmp_path, "r", 0.9, False, mean["state"], method="mean", clip=True)
    patched = extended(tick["loss"], 1, "y")
    bpb = [bpb_at(s, 60) for s in range(1, 101)] + [bpb_at(s, 115) for s in range(101, 131)]
    full = smooth(np.array(bpb), Smoothing("mean", 0.9, clip=True))
    assert np.allclose(patched, full[100:], rtol=0, atol=1e-12) and max(patched) < 0.9


def assigned(patch, trace, axis):
    return next(op["params"]["value"] for op in operations(patch)
                if op["location"] == ["data", trace, axis])


def test_a_zoom_draws_the_same_smoothed_line_and_a_method_change_keeps_the_zoom(tmp_path):
    from gui.pages.training import ids
    from gui.pages.training.zoom import track_redraws, training_zoom
    make_run(tmp_path, steps=range(1, 3001), spike_at=1500)
    bpb = np.array([bpb_at(s, 1500) for s in range(1, 3001)])
    chart = training_update(tmp_path, "r", 0.9, False, None, method="mean", clip=True)["state"]
    out = training_zoom(tmp_path, "r", ids.TRAINING_LOSS,
                        {"xaxis.range[0]": 1400, "xaxis.range[1]": 1600}, True, chart, None)
    xs = np.array(assigned(out["figure"], 1, "x"), dtype=int)
    ys = assigned(out["figure"], 1, "y")
    assert np.allclose(ys, smooth(bpb, Smoothing("mean", 0.9, clip=True))[xs - 1])
    assert max(np.asarray(ys)[(xs >= 1400) & (xs <= 1600)]) < 0.3       # bpb ~0.2, spike clipped
    fig, seen = track_redraws(tmp_path, "r", chart, out["zoom"], None)
    assert track_redraws(tmp_path, "r", chart, out["zoom"], seen)[0] is no_update
    # the method changes: the training callback redraws and the held zoom is drawn again with it
    ema_chart = training_update(tmp_path, "r", 0.9, False, chart, method="ema")["state"]
    fig, _ = track_redraws(tmp_path, "r", ema_chart, out["zoom"], seen)
    xs = np.array(assigned(fig, 1, "x"), dtype=int)
    assert np.allclose(assigned(fig, 1, "y"), ema(bpb, 0.9)[xs - 1])


def test_long_runs_are_downsampled_keeping_peaks(tmp_path):
    make_run(tmp_path, steps=range(1, 20_001), spike_at=12_345)
    out = training_update(tmp_path, "r", 0.6, False, None)
    raw = out["loss"].data[0]
    assert len(raw.x) <= MAX_POINTS + 4 and 12_345 in list(raw.x)
    assert len(out["lr"].data[0].x) <= MAX_POINTS + 4
    assert out["state"]["points"] <= MAX_POINTS


def test_other_outputs_track_the_run(tmp_path):
    run = make_run(tmp_path)
    (run.checkpoints_dir).mkdir()
    (run.checkpoint_path(50)).write_bytes(b"x" * 10)
    (run.checkpoint_path(100)).write_bytes(b"x" * 20)
    out = training_update(tmp_path, "r", 0.6, False, None, checkpoint=None)
    assert out["ck_value"] == "step000100.pt" and len(out["ck_options"]) == 2
    out = training_update(tmp_path, "r", 0.6, False, None, checkpoint="step000050.pt")
    assert out["ck_value"] == "step000050.pt"
    assert "step 1 | loss 5" in out["log"]
    assert "100" in str(out["kpis"][0])
    assert training_update(tmp_path, None, 0.6, False, None)["state"] is None


def test_a_run_that_crashed_before_its_first_step_says_why_in_red(tmp_path):
    run = RunDir(tmp_path / "early")
    run.root.mkdir(parents=True)
    RunStatus(state="crashed", total_steps=100, exit_code=2,
              message="data.path: no dataset at /nowhere").write(run.status_path)
    run.log_path.write_text("error: data.path: no dataset at /nowhere\n")
    out = training_update(tmp_path, "early")
    alert = out["error"]
    assert alert.color == "danger" and "crashed before its first logged step" in str(alert.children)
    assert "exit code 2: data.path: no dataset at /nowhere" in str(alert.children)
    assert out["log"].endswith("no dataset at /nowhere")


def test_a_resumed_run_shows_resuming_not_completed_until_its_first_status(tmp_path):
    import time
    from types import SimpleNamespace

    from gui.services.runs import summarise
    run = make_run(tmp_path)                       # its final status: completed
    done = training_update(tmp_path, "r", 0.6, False, None)
    assert done["eta"] == "Run is completed; no ETA."
    resumed = SimpleNamespace(alive=True, pid=4321, started=time.time() + 1)
    s = summarise(run, launched=resumed)
    assert s.resuming and s.state.value == "running"
    assert s.label == "Resuming (process 4321 started, waiting for its first status)"
    gap = training_update(tmp_path, "r", 0.6, False, None, launched=resumed)
    assert gap["eta"].startswith("ETA: resuming")
    # once the new process writes its status (after it started), the file is believed again
    old = SimpleNamespace(alive=True, pid=4321, started=time.time() - 60)
    assert not summarise(run, launched=old).resuming
    assert not summarise(run, launched=SimpleNamespace(alive=False, pid=1, started=time.time() + 1)).resuming


def test_csv_export_holds_every_row_its_ema_and_validation(tmp_path):
    import io

    from gui.pages.training.callbacks import metrics_csv
    make_run(tmp_path, steps=range(1, 101))
    out = metrics_csv(tmp_path, "r", 0.6)
    assert out["filename"] == "r-metrics.csv" and out["type"] == "text/csv"
    table = pd.read_csv(io.StringIO(out["content"]))
    assert len(table) == 100 and list(table["step"]) == list(range(1, 101))
    assert list(table.columns[:6]) == ["step", "ts", "elapsed_s", "loss", "bpb", "bpb_ema_0.60"]
    assert np.allclose(table["bpb_ema_0.60"], ema(table["bpb"].to_numpy(), 0.6))
    assert table["val_bpb"].notna().sum() == 2 and not math.isnan(table.loc[49, "val_bpb"])
    assert metrics_csv(tmp_path, "missing") is None


def test_a_forge_run_names_its_smoothing_and_draws_its_tokens_per_second(tmp_path):
    from tests.gui.forge_fixtures import write_forge_run
    write_forge_run(tmp_path / "forge-a", steps=50)
    out = training_update(tmp_path, "forge-a", 0.9, False, None, method="mean", clip=True)
    assert out["loss"].data[1].name == "train bits/token (mean of 10, clipped)"
    assert list(out["throughput"].data[0].x) == list(range(50))
    assert set(out["throughput"].data[0].y) == {13692.0}
    again = training_update(tmp_path, "forge-a", 0.9, False, out["state"], method="mean", clip=True)
    assert again["throughput"] is no_update and again["loss"] is no_update
    assert training_update(tmp_path, "forge-a", 0.9, False, out["state"])["loss"] is not no_update


def test_csv_export_of_a_forge_run_is_its_own_log(tmp_path):
    from gui.pages.training.callbacks import metrics_csv
    from tests.gui.forge_fixtures import write_forge_run
    write_forge_run(tmp_path / "forge-a", steps=50)
    out = metrics_csv(tmp_path, "forge-a")
    assert out["filename"] == "forge-a-log.csv"
    assert out["content"] == (tmp_path / "forge-a" / "log.csv").read_text()


def test_system_chart_redraws_only_on_new_samples(tmp_path):
    from gui.pages.training.callbacks import system_update
    run = make_run(tmp_path)                        # logged before system samples: none
    fig, seen = system_update(tmp_path, "r", None)
    assert "No system samples" in fig.layout.annotations[0].text
    with TrainingDB(run.db_path) as db:
        for s in (10, 20):
            db.insert_system_metrics(s, cpu_percent=90.0, rss_bytes=3e8, disk_free_bytes=1e10)
    fig, seen = system_update(tmp_path, "r", seen)
    assert fig.data[0].name.startswith("CPU") and seen["last"] == 20
    assert system_update(tmp_path, "r", seen) == (no_update, no_update)   # nothing new: nothing sent


def test_checkpoint_markers_are_drawn_then_patched_when_a_checkpoint_appears(tmp_path):
    from dash import Patch

    from gui.figures.training import CHECKPOINT_TRACE
    run = make_run(tmp_path)
    run.checkpoints_dir.mkdir()
    run.checkpoint_path(50).write_bytes(b"x" * 10)
    first = training_update(tmp_path, "r", 0.6, False, None)
    marks = first["loss"].data[CHECKPOINT_TRACE]
    assert list(marks.x) == [50] and list(marks.customdata) == ["step000050.pt"]
    assert training_update(tmp_path, "r", 0.6, False, first["state"])["loss"] is no_update
    # a live run writes a checkpoint before its next logged row: the markers alone are patched
    run.checkpoint_path(100).write_bytes(b"x" * 20)
    tick = training_update(tmp_path, "r", 0.6, False, first["state"])
    assert isinstance(tick["loss"], Patch)
    assert assigned(tick["loss"], CHECKPOINT_TRACE, "x") == [50, 100]
    assert assigned(tick["loss"], CHECKPOINT_TRACE, "customdata") == ["step000050.pt", "step000100.pt"]
    assert training_update(tmp_path, "r", 0.6, False, tick["state"])["loss"] is no_update
    # with new rows too: one Patch extends the curves and replaces the markers
    add_rows(run, range(101, 111))
    run.checkpoint_path(50).unlink()
    tick = training_update(tmp_path, "r", 0.6, False, tick["state"])
    assert extended(tick["loss"], 0, "x") == list(range(101, 111))
    assert assigned(tick["loss"], CHECKPOINT_TRACE, "x") == [100]


def test_a_forge_run_marks_its_numbered_checkpoints(tmp_path):
    from gui.figures.training import CHECKPOINT_TRACE
    from tests.gui.forge_fixtures import write_forge_run
    folder = write_forge_run(tmp_path / "forge-a", steps=250)
    out = training_update(tmp_path, "forge-a", 0.6, False, None)
    marks = out["loss"].data[CHECKPOINT_TRACE]
    assert list(marks.x) == [100, 200]                      # ckpt_latest.bin has no step
    assert list(marks.customdata) == ["ckpt_000100.bin", "ckpt_000200.bin"]
    (folder / "ckpt_000250.bin").write_bytes(b"FRGE" + bytes(60))  # log.csv unchanged
    again = training_update(tmp_path, "forge-a", 0.6, False, out["state"])
    assert list(again["loss"].data[CHECKPOINT_TRACE].x) == [100, 200, 250]


def test_switching_to_another_run_drawn_whole_turns_follow_live_back_on():
    from gui.pages.training.zoom import follows_new_run
    seen = {"run": "a", "chart": None, "points": 10}
    b = {"run": "b"}
    assert follows_new_run("b", b, {"run": "a", "window": [1, 2]}, seen, False)  # a's zoom: not b's
    assert not follows_new_run("b", b, None, seen, True)                      # already on
    assert not follows_new_run("b", b, {"run": "b", "window": [1, 2]}, seen, False)  # zoom held
    assert not follows_new_run("a", {"run": "a"}, None, seen, False)          # same run: user's off
    assert not follows_new_run("b", b, None, None, False)                     # first draw of the page


def test_a_full_redraw_draws_the_held_zoom_at_full_resolution_and_fits_y_inside_it(tmp_path):
    from gui.pages.training.zoom import keep_zoom, track_redraws
    make_run(tmp_path, steps=range(1, 3001))
    zoom = {"run": "r", "window": [2000, 2500]}
    out = training_update(tmp_path, "r", 0.6, False, None)
    keep_zoom(tmp_path, out, "r", zoom)
    fig, state = out["loss"], out["state"]
    assert list(fig.layout.xaxis.range) == [2000, 2500] and fig.layout.xaxis.autorange is False
    # every row inside the window (not the whole run's downsample), a coarse overview outside it
    for trace in (0, 1):
        xs = list(fig.data[trace].x)
        assert [x for x in xs if 2000 <= x <= 2500] == list(range(2000, 2501))
        assert min(xs) < 2000 and max(xs) > 2500 and len(xs) < 1000
    inside = [y for x, y in zip(fig.data[0].x, fig.data[0].y, strict=True) if 2000 <= x <= 2500]
    low, high = fig.layout.yaxis.range
    assert low < min(inside) and max(inside) < high and high - low < 0.2   # the late, flat stretch
    assert state["held"] == [2000, 2500] and state["drawn"]
    # the redraw showed the window: no second round trip to re-apply it
    seen = {"run": "r", "chart": None, "points": 0}
    assert track_redraws(tmp_path, "r", state, zoom, seen)[0] is no_update
    # a zoom held on another run, or none: drawn whole, marked as a new draw all the same
    for other in ({"run": "other", "window": [1, 2]}, None):
        again = training_update(tmp_path, "r", 0.6, False, None)
        keep_zoom(tmp_path, again, "r", other)
        assert again["loss"].layout.xaxis.range is None and "held" not in again["state"]
        assert again["state"]["drawn"] not in (None, state["drawn"])
    # a patch keeps the last draw's marks
    ticked = training_update(tmp_path, "r", 0.6, False, state)
    keep_zoom(tmp_path, ticked, "r", zoom)
    assert not isinstance(ticked["loss"], go.Figure)


def test_a_redraw_asked_for_before_the_zoom_is_followed_by_the_zoom(tmp_path):
    """Same settings, same point count: only its `drawn` mark tells this redraw from a tick, and
    the whole run it shows is replaced by the held window."""
    from gui.pages.training.zoom import keep_zoom, track_redraws
    make_run(tmp_path, steps=range(1, 3001))
    first = training_update(tmp_path, "r", 0.6, False, None)
    keep_zoom(tmp_path, first, "r", None)
    _, seen = track_redraws(tmp_path, "r", first["state"], None, None)
    stale = training_update(tmp_path, "r", 0.6, False, None)   # asked for before the zoom
    keep_zoom(tmp_path, stale, "r", None)
    zoom = {"run": "r", "window": [100.0, 200.0]}
    fig, seen = track_redraws(tmp_path, "r", stale["state"], zoom, seen)
    assert [x for x in assigned(fig, 0, "x") if 100 <= x <= 200] == list(range(100, 201))
    assert track_redraws(tmp_path, "r", stale["state"], zoom, seen)[0] is no_update


def test_a_full_draw_smooths_the_loss_once_for_the_chart_and_the_live_state(tmp_path,
                                                                             monkeypatch):
    """One pass of the smoothing over every row gives both the drawn line and the state that
    the live extension carries on (a clipped running mean on 200,000 rows costs ~86 ms a pass);
    a Forge run's view likewise."""
    from gui.figures import series
    from gui.pages.training import callbacks, forge
    from tests.gui.forge_fixtures import write_forge_run
    calls, real = [], series.smooth_continue

    def counted(values, spec, state=None):
        calls.append(len(values))
        return real(values, spec, state)
    monkeypatch.setattr(series, "smooth_continue", counted)
    monkeypatch.setattr(callbacks, "smooth_continue", counted)
    monkeypatch.setattr(forge, "smooth_continue", counted)
    make_run(tmp_path, spike_at=60)
    out = training_update(tmp_path, "r", 0.9, False, None, method="mean", clip=True)
    assert calls == [100]
    line, state = real(np.array([bpb_at(s, 60) for s in range(1, 101)]),
                       Smoothing("mean", 0.9, clip=True))
    assert np.allclose(out["loss"].data[1].y, line, rtol=0, atol=1e-12)
    assert out["state"]["smooth"] == state
    calls.clear()
    write_forge_run(tmp_path / "forge-a", steps=50)
    training_update(tmp_path, "forge-a", 0.9, False, None, method="mean", clip=True)
    assert calls == [50]
