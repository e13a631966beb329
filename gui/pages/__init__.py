"""The cockpit's pages: one folder per tab (layout, callbacks, ids; `PAGE` in its __init__) and
the parts around them (header/, sidebar/, notifications/: each a `register`). PAGES is the tab
bar, in order. Adding a tab: a folder like these, its tab id in gui/ids.py, a line here.
"""
from .. import ids
from . import (
    activations,
    architecture,
    brain,
    compare,
    compression,
    datasets,
    evaluation,
    generate,
    growth,
    mod,
    routing,
    runs,
    training,
)
from .base import Page

PAGES: tuple[Page, ...] = (training.PAGE, compare.PAGE, runs.PAGE, architecture.PAGE,
                           routing.PAGE, mod.PAGE, activations.PAGE, brain.PAGE, compression.PAGE,
                           evaluation.PAGE, growth.PAGE, datasets.PAGE, generate.PAGE)
assert tuple(p.tab_id for p in PAGES) == ids.TAB_IDS


def register_all(app, ctx) -> None:
    """Every callback of the cockpit: the parts around the tabs, then each tab's."""
    from . import header, notifications, sidebar  # they use gui/panes.py, which uses PAGES
    for register in (header.register, sidebar.register, notifications.register, *(p.register for p in PAGES)):
        register(app, ctx)
