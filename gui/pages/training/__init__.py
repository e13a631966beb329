"""The Training tab: KPIs, ETA, live loss/lr/throughput/system charts with zoom (zoom.py), head
losses, checkpoints (resume, export: model_export.py; a click selects one for the other tabs:
checkpoint_select.py), the log; Forge run folders read-only (forge.py)."""
from ... import ids as common
from ..base import Page, registers
from . import callbacks, checkpoint_select, layout, model_export, zoom

PAGE = Page(common.TAB_TRAINING, "Training", layout.layout,
            registers(callbacks.register, zoom.register, checkpoint_select.register,
                      model_export.register))
