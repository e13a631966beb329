"""The Activations tab: per-block activation distributions and statistics at a step."""
from ... import ids
from ..base import Page
from . import callbacks, layout

PAGE = Page(ids.TAB_ACTIVATIONS, "Activations", layout.layout, callbacks.register)
