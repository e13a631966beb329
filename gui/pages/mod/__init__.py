"""The MoD tab: mixture-of-depths: fraction processed per block, now and over training."""
from ... import ids as common
from ..base import Page
from . import callbacks, layout

PAGE = Page(common.TAB_MOD, "MoD", layout.layout, callbacks.register)
