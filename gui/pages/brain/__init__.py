"""The Brain tab: hidden states of a block on two principal components."""
from ... import ids
from ..base import Page
from . import callbacks, layout

PAGE = Page(ids.TAB_BRAIN, "Brain", layout.layout, callbacks.register)
