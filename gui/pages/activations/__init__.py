"""The Activations tab: per-block activation distributions and statistics at a step."""
from ... import ids as common
from ..base import Page
from . import callbacks, layout

PAGE = Page(common.TAB_ACTIVATIONS, "Activations", layout.layout, callbacks.register)
