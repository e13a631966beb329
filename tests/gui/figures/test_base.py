"""What every figure shares (gui/figures/base.py): readable numbers, a reason on every blank chart,
PNG export from the toolbar, lines drawn as SVG unless too long for it."""
import numpy as np
import pandas as pd
import pytest

from gui.figures.activations import activation_dist_fig, activation_heatmap_fig, pca_fig
from gui.figures.base import SVG_MAX_POINTS, TEMPLATE, empty_fig, graph_config, line_trace
from gui.figures.mod import mod_current_fig, mod_gate_history_fig
from gui.figures.routing import load_balance_fig, moe_routing_history_fig, routing_heatmap_fig
from gui.figures.series import MAX_POINTS
from gui.figures.training import loss_fig, lr_grad_fig, throughput_fig


def test_figures_write_numbers_people_read():
    """Axis ticks and hover labels: 55,380 (thousands separated), never 5.538e+04 or 55.38k."""
    import plotly.io as pio
    fig = empty_fig("x")
    t = pio.templates[TEMPLATE].layout
    assert fig.layout.template.layout.xaxis.exponentformat == "none"
    for axis in (t.xaxis, t.yaxis):
        assert axis.exponentformat == "none" and axis.separatethousands is True


def test_graph_config_exports_png_from_the_toolbar():
    cfg = graph_config("compare")
    assert cfg["toImageButtonOptions"]["format"] == "png"
    assert cfg["toImageButtonOptions"]["filename"] == "umoec-compare"


@pytest.mark.parametrize("builder", [routing_heatmap_fig, moe_routing_history_fig, load_balance_fig,
                                     mod_current_fig, mod_gate_history_fig, activation_dist_fig,
                                     activation_heatmap_fig, pca_fig])
def test_empty_frames_give_a_message_not_an_empty_chart(builder):
    fig = builder(pd.DataFrame(columns=["step", "block_idx"]))
    assert fig.data == () and fig.layout.annotations[0].text.startswith("No ")


def test_lines_are_svg_until_they_are_too_long_for_it():
    """SVG up to SVG_MAX_POINTS points (every downsampled line), WebGL beyond."""
    assert line_trace(x=list(range(SVG_MAX_POINTS)), y=[0.0] * SVG_MAX_POINTS).type == "scatter"
    assert line_trace(x=np.arange(SVG_MAX_POINTS + 1), y=np.zeros(SVG_MAX_POINTS + 1)).type == "scattergl"
    assert line_trace(x=[], y=[], mode="lines").type == "scatter"
    assert line_trace(y=[1.0, 2.0]).type == "scatter"


def test_the_training_charts_draw_their_downsampled_lines_as_svg():
    steps = np.arange(1, 200_001)
    train = pd.DataFrame({"step": steps, "bpb": 2 + np.sin(steps / 500), "lr": 1e-3,
                          "grad_norm": 1.0, "tokens_per_sec": 1e4})
    for fig in (loss_fig(train, train.iloc[:0][["step", "bpb"]], max_points=MAX_POINTS),
                lr_grad_fig(train, max_points=MAX_POINTS), throughput_fig(train, max_points=MAX_POINTS)):
        assert {t.type for t in fig.data} == {"scatter"}
