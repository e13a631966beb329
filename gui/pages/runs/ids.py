"""The Runs tab's own component ids (spec strings unchanged; the ids other parts share are in
gui/ids.py)."""
RUNS_TABLE = "runs-table"
RUNS_SELECTED = "runs-selected"                  # which run the management card acts on
RUNS_RENAME_INPUT = "runs-rename-input"
RUNS_RENAME_BTN = "runs-rename-btn"
RUNS_DELETE_BTN = "runs-delete-btn"
RUNS_DELETE_MODAL = "runs-delete-modal"
RUNS_DELETE_BODY = "runs-delete-body"
RUNS_DELETE_CONFIRM = "runs-delete-confirm-btn"
RUNS_DELETE_CANCEL = "runs-delete-cancel-btn"
RUNS_NOTES = "runs-notes"
RUNS_NOTES_SAVE = "runs-notes-save-btn"
RUNS_MESSAGE = "runs-message"
FORGE_PATH = "forge-open-path"
FORGE_OPEN_BTN = "forge-open-btn"
FORGE_MESSAGE = "forge-open-message"
RUNS_DELETE_TARGET = "runs-delete-target"              # memory: the run the open dialog deletes
