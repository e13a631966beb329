"""The Evaluation tab: evaluate a coding model or checkpoint on data, against the reference compressors."""
from ... import ids as common
from ..base import Page
from . import callbacks, layout

PAGE = Page(common.TAB_EVAL, "Evaluation", layout.layout, callbacks.register)
