"""The Generate tab: sampling from a checkpoint, streamed, and surprisal colouring."""
from ... import ids as common
from ..base import Page
from . import callbacks, layout

PAGE = Page(common.TAB_GENERATE, "Generate", layout.layout, callbacks.register)
