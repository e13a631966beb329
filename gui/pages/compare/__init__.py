"""The Compare tab: 2-8 runs overlaid, re-aggregated on zoom, a diff table and CSV."""
from ... import ids as common
from ..base import Page
from . import callbacks, layout

PAGE = Page(common.TAB_COMPARE, "Compare", layout.layout, callbacks.register)
