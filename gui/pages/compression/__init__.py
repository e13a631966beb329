"""The Compression tab: compress a file with a coding model, verified round trip, peers side by side."""
from ... import ids as common
from ..base import Page
from . import callbacks, layout

PAGE = Page(common.TAB_COMPRESSION, "Compression", layout.layout, callbacks.register)
