"""What every figure shares (gui/figures/base.py): readable numbers, a reason on every blank chart,
PNG export from the toolbar."""
import pandas as pd
import pytest

from gui.figures.activations import activation_dist_fig, activation_heatmap_fig, pca_fig
from gui.figures.base import TEMPLATE, empty_fig, graph_config
from gui.figures.mod import mod_current_fig, mod_gate_history_fig
from gui.figures.routing import load_balance_fig, moe_routing_history_fig, routing_heatmap_fig


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
