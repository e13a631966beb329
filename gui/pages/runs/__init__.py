"""The Runs tab: every run in a sortable list; rename, delete, notes."""
from ... import ids as common
from ..base import Page
from . import callbacks, layout

PAGE = Page(common.TAB_RUNS, "Runs", layout.layout, callbacks.register)
