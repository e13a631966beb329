"""The Generate tab: sampling from a checkpoint, streamed, and surprisal colouring."""
from ... import ids
from ..base import Page
from . import callbacks, layout

PAGE = Page(ids.TAB_GENERATE, "Generate", layout.layout, callbacks.register)
