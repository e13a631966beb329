"""The controls of an analysis tab that shows one logged step of a per-step table (Activations,
Brain, Routing): its step slider, the alert saying why there is nothing to draw, the data version
store its views redraw on, and optionally a block dropdown. They refresh on the tab's tick while it
is shown (services.analysis.probe) and send nothing while the run's rows are unchanged.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from dash import Input, Output, State
from dash.exceptions import PreventUpdate

from umoec.metrics import read

from .. import ids
from ..services import analysis
from ..view import analysis as av
from ..view.read_errors import db_read_error
from .analysis_widgets import probe_alert, slider_outputs
from .visible import visible_only


@dataclass(frozen=True)
class BlockPicker:
    """A block dropdown: which blocks the newest step has (`blocks(conn, step)`, block indices),
    their options, and what stays chosen (`pick(current, blocks)`)."""

    dropdown: str
    blocks: Callable
    options: Callable[[list[int]], list]
    pick: Callable


def register_step_controls(app, runs_dir: Path, *, tab: str, table: str, missing: Callable,
                           slider: str, message: str, version: str,
                           picker: BlockPicker | None = None) -> None:
    extra_out = [Output(picker.dropdown, "options"), Output(picker.dropdown, "value")] if picker else []
    extra_state = [State(picker.dropdown, "value")] if picker else []

    @app.callback(*slider_outputs(slider), *extra_out, Output(message, "children"),
                  Output(version, "data"),
                  Input(ids.tab_tick(tab), "data"), Input(ids.RUN_SELECT, "value"),
                  Input(ids.TABS, "active_tab"),
                  State(slider, "value"), State(slider, "max"), *extra_state, State(version, "data"))
    @visible_only(tab)
    def controls(_n, name, _active, value, old_max, *rest):
        seen = rest[-1]
        p = analysis.probe(runs_dir, name, table, missing)
        if p.version == seen:
            raise PreventUpdate
        slider_props = av.slider_props(p, value, old_max)
        if picker is None:
            return (*slider_props, probe_alert(p), p.version)
        blocks: list[int] = []
        if p.ok:
            try:
                with read.open_db(p.run.db_path) as conn:
                    blocks = sorted({int(b) for b in picker.blocks(conn, p.last)})
            except read.READ_ERRORS as exc:
                p.message, p.colour = db_read_error(p.run.db_path, exc), "danger"
                slider_props = av.slider_props(p, None, None)
        return (*slider_props, picker.options(blocks), picker.pick(rest[0], blocks),
                probe_alert(p), p.version)
