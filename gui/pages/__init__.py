"""The cockpit's pages: one folder per tab (layout.py, callbacks.py, ids.py; a row in TABS) and
the parts around them (header/, sidebar/, notifications/: each a `register`). PAGES is the tab
bar, in order. Adding a tab: a folder like these, its tab id in gui/ids.py, a row in TABS.
"""
from importlib import import_module

from .. import ids
from .base import Page, registers

# the tab bar, in order: (tab id, label, folder[, the folder's other modules with a `register`])
TABS = ((ids.TAB_TRAINING, "Training", "training", "zoom", "checkpoint_select", "model_export"),
        (ids.TAB_COMPARE, "Compare", "compare"),
        (ids.TAB_RUNS, "Runs", "runs"),
        (ids.TAB_ARCH, "Architecture", "architecture"),
        (ids.TAB_ROUTING, "Routing", "routing"),
        (ids.TAB_MOD, "MoD", "mod"),
        (ids.TAB_ACTIVATIONS, "Activations", "activations"),
        (ids.TAB_BRAIN, "Brain", "brain"),
        (ids.TAB_COMPRESSION, "Compression", "compression"),
        (ids.TAB_EVAL, "Evaluation", "evaluation"),
        (ids.TAB_GROWTH, "Growth", "growth"),
        (ids.TAB_DATASETS, "Datasets", "datasets"),
        (ids.TAB_GENERATE, "Generate", "generate"))


def _page(tab_id: str, label: str, folder: str, *more: str) -> Page:
    """A tab from its folder: layout.layout, and the register of callbacks.py then of each of `more`."""
    layout, *parts = (import_module(f"{__name__}.{folder}.{m}") for m in ("layout", "callbacks", *more))
    return Page(tab_id, label, layout.layout, registers(*(p.register for p in parts)))


PAGES: tuple[Page, ...] = tuple(_page(*row) for row in TABS)
assert tuple(p.tab_id for p in PAGES) == ids.TAB_IDS


def register_all(app, ctx) -> None:
    """Every callback of the cockpit: the parts around the tabs, then each tab's."""
    from . import header, notifications, sidebar  # they use gui/panes.py, which uses PAGES
    for register in (header.register, sidebar.register, notifications.register, *(p.register for p in PAGES)):
        register(app, ctx)
