"""The Datasets tab: the datasets folder, a preview, and new-dataset builds."""
from ... import ids
from ..base import Page
from . import callbacks, layout

PAGE = Page(ids.TAB_DATASETS, "Datasets", layout.layout, callbacks.register)
