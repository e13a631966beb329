"""Training charts (gui/figures/training.py)."""
import pandas as pd

from gui.figures.training import loss_fig


def test_loss_figure_has_raw_smoothed_val_and_best_marker():
    train = pd.DataFrame({"step": [1, 2, 3], "bpb": [8.0, 6.0, 5.0]})
    val = pd.DataFrame({"step": [2, 3], "bpb": [6.5, 5.5]})
    fig = loss_fig(train, val)
    names = [t.name for t in fig.data]
    assert names[:3] == ["train bpb", "train bpb (EMA 0.60)", "val bpb"]
    assert names[3] == "best val 5.500" and list(fig.data[3].x) == [3]
    assert loss_fig(train, val, log_y=True).layout.yaxis.type == "log"
    empty = loss_fig(train.iloc[:0], val.iloc[:0])
    assert "No training metrics yet" in empty.layout.annotations[0].text


def test_training_charts_read_with_a_crosshair_and_show_the_clip_threshold():
    from gui.figures.training import lr_grad_fig
    train = pd.DataFrame({"step": [1, 2, 3], "bpb": [8.0, 6.0, 5.0], "lr": [1e-3, 2e-3, 3e-3],
                          "grad_norm": [3.0, 1.0, 0.5]})
    for fig in (loss_fig(train, train.iloc[:0]), lr_grad_fig(train)):
        assert fig.layout.hovermode == "x unified"            # one callout, every curve
        assert fig.layout.xaxis.showspikes and fig.layout.xaxis.spikemode == "across"
    assert not lr_grad_fig(train).layout.shapes
    clipped = lr_grad_fig(train, grad_clip=1.0)
    [line] = clipped.layout.shapes
    assert (line.yref, line.y0, line.y1, line.line.dash) == ("y2", 1.0, 1.0, "dash")
    assert clipped.layout.annotations[0].text == "grad clip 1"


def test_the_run_config_gives_the_clip_line(tmp_path):
    from gui.pages.training.callbacks import grad_clip_of
    from umoec import config as C
    from umoec.run import RunDir
    run = RunDir(tmp_path / "r")
    run.root.mkdir()
    assert grad_clip_of(run) is None                          # no config: no line
    C.save(C.load_preset("tier1_micro", ["training.grad_clip=0.5"]), run.config_path)
    assert grad_clip_of(run) == 0.5
    C.save(C.load_preset("tier1_micro", ["training.grad_clip=0"]), run.config_path)
    assert grad_clip_of(run) is None                          # clipping off


def test_system_chart_draws_what_was_measured():
    import numpy as np

    from gui.figures.training import system_fig
    assert "No system samples" in system_fig(pd.DataFrame()).layout.annotations[0].text
    cpu = pd.DataFrame({"step": [10, 20, 30], "ts": [1.0, 2.0, 3.0], "cpu_percent": [95.0, 180.0, 175.0],
                        "rss_bytes": [2e8, 2.5e8, 2.5e8], "disk_free_bytes": [5e10, 5e10, 4.9e10],
                        "gpu_util": [np.nan] * 3, "gpu_mem_bytes": [np.nan] * 3})
    fig = system_fig(cpu)
    assert [t.name for t in fig.data] == ["CPU % (of one core)", "memory (MB, resident)"]
    assert list(fig.data[1].y) == [200.0, 250.0, 250.0] and fig.data[1].yaxis == "y2"
    assert fig.layout.title.text == "disk free 49 GB"
    gpu = cpu.assign(gpu_util=[50.0, 60.0, 70.0], gpu_mem_bytes=[1e9, 1e9, 1e9])
    assert len(system_fig(gpu).data) == 4                       # GPU lines only when measured


def test_the_smoothed_trace_names_its_method_and_the_raw_trace_stays_unclipped():
    from gui.figures.series import Smoothing
    train = pd.DataFrame({"step": range(1, 9), "bpb": [4.0, 4.1, 3.9, 4.0, 4.1, 3.9, 4.0, 90.0]})
    val = train.iloc[:0]
    names = {m: loss_fig(train, val, Smoothing(m, 0.9)).data[1].name for m in ("ema", "mean", "none")}
    assert names == {"ema": "train bpb (EMA 0.90)", "mean": "train bpb (mean of 10)",
                     "none": "train bpb (unsmoothed)"}
    clipped = loss_fig(train, val, Smoothing("none", 0.9, clip=True))
    assert clipped.data[1].name == "train bpb (unsmoothed, clipped)"
    assert clipped.data[0].y[-1] == 90.0 and clipped.data[1].y[-1] < 5.0
    means = loss_fig(train, val, Smoothing("mean", 0.5)).data[1].y     # a window of 2
    assert list(means[:3]) == [4.0, 4.05, 4.0]


def test_throughput_chart_draws_tokens_per_second_against_step():
    from gui.figures.series import MAX_POINTS
    from gui.figures.training import throughput_fig
    train = pd.DataFrame({"step": [10, 20, 30], "tokens_per_sec": [1500.0, 2400.0, 2300.0]})
    [trace] = throughput_fig(train).data
    assert trace.name == "tokens/s" and list(trace.x) == [10, 20, 30]
    assert list(trace.y) == [1500.0, 2400.0, 2300.0]
    assert "No throughput yet" in throughput_fig(train.iloc[:0]).layout.annotations[0].text
    long = pd.DataFrame({"step": range(50_000), "tokens_per_sec": 1000.0})
    long.loc[31_337, "tokens_per_sec"] = 9.0                           # one slow step survives
    [trace] = throughput_fig(long, max_points=MAX_POINTS).data
    assert len(trace.x) <= MAX_POINTS + 4 and 31_337 in list(trace.x)


def test_checkpoints_are_markers_in_a_lane_under_the_curves():
    from gui.figures.training import CHECKPOINT_TRACE, LOSS_TRACES
    train = pd.DataFrame({"step": [100, 200, 300], "bpb": [8.0, 6.0, 5.0]})
    cks = pd.DataFrame({"step": [100, 300], "file": ["step000100.pt", "step000300.pt"],
                        "size": [9773, 2_500_000], "mtime": [1.7e9, 1.7e9 + 60]})
    fig = loss_fig(train, train.iloc[:0], log_y=True, checkpoints=cks)
    assert len(fig.data) == len(LOSS_TRACES)
    marks = fig.data[CHECKPOINT_TRACE]
    assert list(marks.x) == [100, 300] and list(marks.customdata) == ["step000100.pt", "step000300.pt"]
    assert marks.text[1].startswith("step000300.pt: step 300, 2.5 MB, ")
    assert marks.hovertemplate == "%{text}<extra></extra>" and not marks.showlegend
    # their own lane (y2) below the curves' axis: no curve is hidden, log y is the curves' only
    assert marks.yaxis == "y2" and fig.layout.yaxis2.domain[1] < fig.layout.yaxis.domain[0]
    assert fig.layout.yaxis.type == "log" and fig.layout.yaxis2.type is None
    assert fig.layout.yaxis2.fixedrange and fig.layout.xaxis.anchor == "y2"
    # a run without checkpoints has an empty lane (markers appear live); callers that pass
    # none (the HTML report) draw no lane
    assert list(loss_fig(train, train.iloc[:0], checkpoints=cks.iloc[:0]).data[CHECKPOINT_TRACE].x) == []
    assert len(loss_fig(train, train.iloc[:0]).data) == CHECKPOINT_TRACE
