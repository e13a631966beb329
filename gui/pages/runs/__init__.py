"""The Runs tab: every run in a sortable list; rename, delete, notes."""
from ... import ids
from ..base import Page
from . import callbacks, layout

PAGE = Page(ids.TAB_RUNS, "Runs", layout.layout, callbacks.register)
