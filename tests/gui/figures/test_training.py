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
