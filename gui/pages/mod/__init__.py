"""The MoD tab: mixture-of-depths: fraction processed per block, now and over training."""
from ... import ids
from ..base import Page
from . import callbacks, layout

PAGE = Page(ids.TAB_MOD, "MoD", layout.layout, callbacks.register)
