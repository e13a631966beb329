"""The Datasets tab: the datasets folder, a preview, and new-dataset builds."""
from ... import ids as common
from ..base import Page
from . import callbacks, layout

PAGE = Page(common.TAB_DATASETS, "Datasets", layout.layout, callbacks.register)
