"""The Architecture tab: a diagram of the sidebar's model, size cards, per-block table."""
from ... import ids as common
from ..base import Page
from . import callbacks, layout

PAGE = Page(common.TAB_ARCH, "Architecture", layout.layout, callbacks.register)
