"""The tabs and their panes. A pane is built the first time its tab is shown, then stays mounted
(hidden behind other tabs, keeping what the user set): a page load pays for the visible tab only,
as Dash skips callbacks whose components are not mounted yet (gui/pages/header/panes.py)."""
from __future__ import annotations

from collections.abc import Iterable

import dash_bootstrap_components as dbc
from dash import dcc, html

from . import ids
from .pages import PAGES
from .pages.base import Page

PANES: dict[str, Page] = {p.tab_id: p for p in PAGES}     # tab id -> page, in tab bar order
# each pane's checkpoint pickers: what each applied of a loss-chart selection is kept in its pane,
# so their callbacks write nothing outside it (Dash skips a callback only when all outputs are missing)
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
    return html.Div([PANES[tab].layout(), *seen])


def layout(mounted: Iterable[str] = (FIRST,)) -> list:
    """The tab bar and one pane per tab, those in `mounted` built (all: the validation layout)."""
    mounted = set(mounted)
    tabs = dbc.Tabs([dbc.Tab(label=p.label, tab_id=p.tab_id) for p in PAGES],
                    id=ids.TABS, active_tab=FIRST, class_name="mb-3")
    slots = [html.Div(build(tab) if tab in mounted else None, id=ids.pane(tab),
                      className=pane_class(tab, FIRST)) for tab in PANES]
    return [tabs, *slots]


def mount(active: str | None, mounted: list | None) -> tuple[dict[str, object], list]:
    """({tab: layout} of the shown tab when not built yet, the new list of built panes)."""
    mounted = list(mounted or [FIRST])
    if active not in PANES or active in mounted:
        return {}, mounted
    return {active: build(active)}, [*mounted, active]
