"""The Training tab: KPIs, ETA, live loss/lr/throughput/system charts with zoom (zoom.py), head
losses, checkpoints (resume, export: model_export.py; a click selects one for the other tabs:
checkpoint_select.py), the log; Forge run folders read-only (forge.py)."""
