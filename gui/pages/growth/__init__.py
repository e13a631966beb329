"""The Growth tab: six size knobs from the sidebar's config and the sizes they give."""
from ... import ids as common
from ..base import Page
from . import callbacks, layout

PAGE = Page(common.TAB_GROWTH, "Growth", layout.layout, callbacks.register)
