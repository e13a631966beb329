"""The tabs and their panes. A pane's layout is built the first time its tab is shown (the
Training tab's at page load), then stays mounted, hidden while another tab is shown: a page
starts with one tab's components instead of thirteen's, and callbacks whose components are not
mounted yet do not run (Dash skips them), so a page load pays for the visible tab only; once
mounted, a tab keeps what the user set in it (gui/callbacks/pane_callbacks.py)."""
from __future__ import annotations

from collections.abc import Callable, Iterable

import dash_bootstrap_components as dbc
from dash import dcc, html

from . import ids
from .panels import (
    activations_panel,
    architecture_panel,
    brain_panel,
    compare_panel,
    compression_panel,
    datasets_panel,
    eval_panel,
    generate_panel,
    growth_panel,
    mod_panel,
    routing_panel,
    runs_panel,
    training_panel,
)

# tab id -> (label, pane layout), in the order of the tab bar (ids.TAB_IDS)
PANES: dict[str, tuple[str, Callable[[], object]]] = {
    ids.TAB_TRAINING: ("Training", training_panel.layout),
    ids.TAB_COMPARE: ("Compare", compare_panel.layout),
    ids.TAB_RUNS: ("Runs", runs_panel.layout),
    ids.TAB_ARCH: ("Architecture", architecture_panel.layout),
    ids.TAB_ROUTING: ("Routing", routing_panel.layout),
    ids.TAB_MOD: ("MoD", mod_panel.layout),
    ids.TAB_ACTIVATIONS: ("Activations", activations_panel.layout),
    ids.TAB_BRAIN: ("Brain", brain_panel.layout),
    ids.TAB_COMPRESSION: ("Compression", compression_panel.layout),
    ids.TAB_EVAL: ("Evaluation", eval_panel.layout),
    ids.TAB_GROWTH: ("Growth", growth_panel.layout),
    ids.TAB_DATASETS: ("Datasets", datasets_panel.layout),
    ids.TAB_GENERATE: ("Generate", generate_panel.layout),
}
assert tuple(PANES) == ids.TAB_IDS
# the checkpoint pickers in each pane: what each applied of a loss-chart selection is kept in the
# same pane (checkpoint_select), so none of their callbacks writes outside it: Dash skips a
# callback whose outputs are all missing, not one that could still write a store elsewhere
PICKERS: dict[str, tuple[str, ...]] = {
    ids.TAB_TRAINING: (ids.RESUME_CHECKPOINT,),
    ids.TAB_COMPRESSION: (ids.COMPRESS_CHECKPOINT, ids.COMPRESS_MODEL),
    ids.TAB_EVAL: (ids.EVAL_CHECKPOINT, ids.EVAL_MODEL),
    ids.TAB_GENERATE: (ids.GEN_CHECKPOINT,),
}
FIRST = ids.TAB_TRAINING
PANE, HIDDEN = "cockpit-pane", "cockpit-pane d-none"   # the shown pane: .cockpit-pane:not(.d-none)


def pane_class(tab: str, active: str | None) -> str:
    return PANE if tab == (active or FIRST) else HIDDEN


def build(tab: str) -> html.Div:
    """A tab's pane content: its panel and its pickers' stores."""
    seen = [dcc.Store(id=ids.pick_seen(p), storage_type="memory") for p in PICKERS.get(tab, ())]
    return html.Div([PANES[tab][1](), *seen])


def layout(mounted: Iterable[str] = (FIRST,)) -> list:
    """The tab bar and one pane per tab; the panes in `mounted` built (all of them: the layout
    every callback is checked against)."""
    mounted = set(mounted)
    tabs = dbc.Tabs([dbc.Tab(label=label, tab_id=tab) for tab, (label, _) in PANES.items()],
                    id=ids.TABS, active_tab=FIRST, class_name="mb-3")
    slots = [html.Div(build(tab) if tab in mounted else None, id=ids.pane(tab),
                      className=pane_class(tab, FIRST))
             for tab in PANES]
    return [tabs, *slots]


def mount(active: str | None, mounted: list | None) -> tuple[dict[str, object], list]:
    """The panes to build now ({tab: layout}: the shown tab, when not built yet) and the new list
    of built panes."""
    mounted = list(mounted or [FIRST])
    if active not in PANES or active in mounted:
        return {}, mounted
    return {active: build(active)}, [*mounted, active]
