"""The Datasets tab's own component ids (spec strings unchanged; the ids other parts share are in
gui/ids.py)."""
DATASETS_NOTE = "datasets-note"                  # the datasets folder and what it holds
DATASETS_TABLE = "datasets-table"
DATASETS_RUNS = "datasets-run-usage"             # which dataset each run uses
DATASETS_SELECT = "datasets-select"
DATASETS_PREVIEW = "datasets-preview"
DATASETS_FILES = "datasets-files"
DATASETS_USE = "datasets-use-btn"                # puts data.path into the config editor
DATASETS_USE_MSG = "datasets-use-msg"
DATASETS_NEW_NAME = "datasets-new-name"
DATASETS_NEW_SOURCES = "datasets-new-sources"
DATASETS_NEW_VAL = "datasets-new-val-fraction"
DATASETS_NEW_MAX = "datasets-new-max-bytes"
DATASETS_CREATE = "datasets-create-btn"
DATASETS_CANCEL = "datasets-cancel-btn"
DATASETS_CONSOLE = "datasets-console"            # live tail of prepare_data's output
DATASETS_BUILD_MSG = "datasets-build-msg"
DATASETS_POLL = "datasets-poll"
DATASETS_JOB = "datasets-job"                    # store: the build this page started
DATASETS_VERSION = "datasets-version"            # store: bumps when a build ends (list refresh)
