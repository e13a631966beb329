"""Every component id of the cockpit, in one place (spec ids are binding)."""

# header / run selection
RUN_SELECT = "run-select"
RUN_STATUS = "run-status"
RUNS_DIR_NOTE = "runs-dir-note"
REFRESH = "refresh-interval"
TABS = "main-tabs"

# training tab (spec WS2)
TRAINING_KPIS = "training-kpi-cards"
TRAINING_ETA = "training-eta"
TRAINING_LOSS = "training-loss-graph"
TRAINING_LR = "training-lr-graph"
TRAINING_HEADS = "training-head-losses"
CHECKPOINT_LIST = "checkpoint-list"
LOG_TAIL = "training-log-tail"
TRAINING_ERROR = "training-error"
