"""The Brain tab: hidden states of a block on two principal components."""
from ... import ids as common
from ..base import Page
from . import callbacks, layout

PAGE = Page(common.TAB_BRAIN, "Brain", layout.layout, callbacks.register)
