"""The Evaluation tab: evaluate a coding model or checkpoint on data, against the reference compressors."""
from ... import ids
from ..base import Page
from . import callbacks, layout

PAGE = Page(ids.TAB_EVAL, "Evaluation", layout.layout, callbacks.register)
