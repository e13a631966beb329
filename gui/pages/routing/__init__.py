"""The Routing tab: expert load at a step and over training, balance, drill-down."""
from ... import ids as common
from ..base import Page
from . import callbacks, layout

PAGE = Page(common.TAB_ROUTING, "Routing", layout.layout, callbacks.register)
