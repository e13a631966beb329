"""The header's own component ids (spec strings unchanged; the ids other parts share are in
gui/ids.py)."""
RUN_STATUS = "run-status"
RUNS_DIR_NOTE = "runs-dir-note"
REFRESH = "refresh-interval"
