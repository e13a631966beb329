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

# routing tab (spec WS3, issue 7)
TAB_ROUTING = "tab-routing"
ROUTING_MESSAGE = "routing-message"
ROUTING_STEP = "routing-step-slider"
ROUTING_STEP_LABEL = "routing-step-label"
ROUTING_HEATMAP = "routing-heatmap"
ROUTING_BLOCK = "routing-block-select"
ROUTING_VALUE = "routing-value-select"
ROUTING_HISTORY = "routing-bias-history"
ROUTING_HISTORY_NOTE = "routing-history-note"
ROUTING_BALANCE = "routing-load-balance"
ROUTING_EXPERT_DETAIL = "routing-expert-detail"
ROUTING_SELECTED = "routing-selected-expert"
ROUTING_VERSION = "routing-data-version"

# MoD tab (spec WS4, issue 7)
TAB_MOD = "tab-mod"
MOD_MESSAGE = "mod-message"
MOD_CARDS = "mod-metric-cards"
MOD_CURRENT = "mod-current"
MOD_HISTORY = "mod-history"
MOD_HISTORY_NOTE = "mod-history-note"
MOD_VERSION = "mod-data-version"

# activations tab (spec WS5, issue 7)
TAB_ACTIVATIONS = "tab-activations"
ACT_MESSAGE = "activation-message"
ACT_STEP = "activation-step-slider"
ACT_STEP_LABEL = "activation-step-label"
ACT_DIST = "activation-dist"
ACT_HEATMAP = "activation-heatmap"
ACT_VERSION = "activation-data-version"

# brain tab (spec WS5, issue 7)
TAB_BRAIN = "tab-brain"
BRAIN_MESSAGE = "brain-message"
BRAIN_BLOCK = "brain-block-select"
BRAIN_STEP = "brain-step-slider"
BRAIN_STEP_LABEL = "brain-step-label"
BRAIN_PCA = "brain-pca"
BRAIN_VERSION = "brain-data-version"

# config sidebar (spec WS1); each schema field's id is FieldInfo.component_id (config-<section>-<field>)
CONFIG_TIER = "config-tier"
CONFIG_COMPONENTS = "config-components"
CONFIG_LOAD_PATH = "config-load-path"
CONFIG_LOAD_BTN = "config-load-btn"
CONFIG_SAVE_PATH = "config-save-path"
CONFIG_SAVE_BTN = "config-save-btn"
CONFIG_RESET_BTN = "config-reset-btn"
CONFIG_FILE_STATUS = "config-file-status"
CONFIG_ACCORDION = "config-accordion"
CONFIG_VALIDATION = "config-validation"
CONFIG_DERIVED = "config-derived"
CONFIG_LR_PREVIEW = "config-lr-preview"
CONFIG_FORM_STORE = "config-form-store"    # localStorage: the form survives a reload
CONFIG_INJECT = "config-inject"            # other tabs put {dotted key: value} here to fill the form
# training control (spec WS2/WS7)
CONFIG_RUNNER = "config-runner"
CONFIG_RUNNER_NOTE = "config-runner-note"
CONFIG_RUN_NAME = "config-run-name"
CONFIG_SIM_RATE = "config-sim-rate"
CONFIG_START = "config-start-btn"
CONFIG_STOP = "config-stop-btn"
CONFIG_STATUS = "config-status"
CONFIG_CONTROL_MSG = "config-control-msg"  # store: the last start/stop/resume outcome
RESUME_CHECKPOINT = "resume-checkpoint"
RESUME_BTN = "resume-btn"
# training tab chart controls
TRAINING_SMOOTHING = "training-smoothing"
TRAINING_LOGY = "training-logy"
TRAINING_CHART_STATE = "training-chart-state"
# tabs owned by later issues (placeholders until then)
TAB_TRAINING = "tab-training"
TAB_ARCH = "tab-arch"
TAB_COMPRESSION = "tab-compression"
TAB_EVAL = "tab-eval"
TAB_GROWTH = "tab-growth"


def field_msg_id(component_id: str) -> str:
    """The message line under a config field (error or warning)."""
    return component_id + "-msg"


def section_item_id(section: str) -> str:
    """The accordion item of a config section, e.g. config-section-optimizer-muon."""
    return "config-section-" + section.replace(".", "-").replace("_", "-")
