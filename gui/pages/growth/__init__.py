"""The Growth tab: six size knobs from the sidebar's config and the sizes they give."""
from ... import ids
from ..base import Page
from . import callbacks, layout

PAGE = Page(ids.TAB_GROWTH, "Growth", layout.layout, callbacks.register)
