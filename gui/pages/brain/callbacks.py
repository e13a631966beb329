"""Brain tab: PCA scatter of hidden states per block at a step (step_controls refresh the slider
and block selector per tick); `view` reads one snapshot (~200 rows per block)."""
from __future__ import annotations

from dash import Input, Output
from dash.exceptions import PreventUpdate

from umoec.metrics import read

from ... import ids as common
from ...components.step_controls import BlockPicker, register_step_controls
from ...context import AppContext
from ...figures.activations import pca_fig
from ...figures.base import empty_fig
from ...services import analysis
from ...view import analysis as av
from . import ids
from .layout import ALL_BLOCKS

TABLE = "hidden_states"


def block_options(blocks) -> list[dict]:
    return ([{"label": "all blocks", "value": ALL_BLOCKS}]
            + [{"label": f"block {b}", "value": b} for b in blocks])


# all blocks, or the block chosen while the newest step still has it
PICKER = BlockPicker(ids.BRAIN_BLOCK, lambda conn, step: read.hidden_states_at(conn, step)["block_idx"],
                     block_options, lambda block, blocks: block if block in blocks else ALL_BLOCKS)


def register(app, cockpit: AppContext) -> None:
    runs_dir = cockpit.settings.runs_dir
    missing = av.missing_snapshots("hidden-state snapshots")

    register_step_controls(app, runs_dir, tab=common.TAB_BRAIN, table=TABLE, missing=missing,
                           slider=ids.BRAIN_STEP, message=ids.BRAIN_MESSAGE, version=ids.BRAIN_VERSION,
                           picker=PICKER)

    @app.callback(Output(ids.BRAIN_PCA, "figure"), Output(ids.BRAIN_STEP_LABEL, "children"),
                  Input(ids.BRAIN_STEP, "value"), Input(ids.BRAIN_BLOCK, "value"),
                  Input(ids.BRAIN_VERSION, "data"))
    def view(step, block, version):
        one = None if block in (None, ALL_BLOCKS) else int(block)
        got = analysis.read_at(runs_dir, version, TABLE, step,
                               lambda conn, shown: read.hidden_states_at(conn, shown, block_idx=one))
        if got is None:
            raise PreventUpdate
        message, data = got
        if message:
            return empty_fig(message, height=520), ""
        shown, hidden = data
        return pca_fig(hidden, one), av.step_label(shown, version["last"])
