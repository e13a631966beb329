"""Every component id of the cockpit, in one place (spec ids are binding)."""

# header / run selection
RUN_SELECT = "run-select"
RUN_STATUS = "run-status"
RUNS_DIR_NOTE = "runs-dir-note"
REFRESH = "refresh-interval"
TAB_TICK = "tab-tick"          # one store per tab: the refresh tick, written for the visible tab only
PULSE = "refresh-pulse"        # the server's answer to a tick: a signature of what pages show
HEADER_TICK = "header-tick"    # advanced when the pulse changes: run list, status, notifications
TABS = "main-tabs"

# training tab
TRAINING_KPIS = "training-kpi-cards"
TRAINING_ETA = "training-eta"
TRAINING_LOSS = "training-loss-graph"
TRAINING_LR = "training-lr-graph"
TRAINING_HEADS = "training-head-losses"
CHECKPOINT_LIST = "checkpoint-list"
CHECKPOINT_EXPORT_BTN = "checkpoint-export-btn"        # pattern-matching type, index: file name
CHECKPOINT_EXPORT_STATUS = "checkpoint-export-status"  # the export job's progress / outcome
CHECKPOINT_EXPORT_ACTION = "checkpoint-export-action"  # store: outcome of the last Export press
LOG_TAIL = "training-log-tail"
TRAINING_ERROR = "training-error"

# routing tab
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

# MoD tab
TAB_MOD = "tab-mod"
MOD_MESSAGE = "mod-message"
MOD_CARDS = "mod-metric-cards"
MOD_CURRENT = "mod-current"
MOD_HISTORY = "mod-history"
MOD_HISTORY_NOTE = "mod-history-note"
MOD_VERSION = "mod-data-version"

# activations tab
TAB_ACTIVATIONS = "tab-activations"
ACT_MESSAGE = "activation-message"
ACT_STEP = "activation-step-slider"
ACT_STEP_LABEL = "activation-step-label"
ACT_DIST = "activation-dist"
ACT_HEATMAP = "activation-heatmap"
ACT_VERSION = "activation-data-version"

# brain tab
TAB_BRAIN = "tab-brain"
BRAIN_MESSAGE = "brain-message"
BRAIN_BLOCK = "brain-block-select"
BRAIN_STEP = "brain-step-slider"
BRAIN_STEP_LABEL = "brain-step-label"
BRAIN_PCA = "brain-pca"
BRAIN_VERSION = "brain-data-version"

# architecture tab
ARCH_MESSAGE = "arch-message"
ARCH_CARDS = "arch-metric-cards"
ARCH_DIAGRAM = "arch-diagram"
ARCH_TABLE = "arch-block-table"

# growth tab; one slider per knob: growth-<field> (growth-d-model, growth-top-k, ...)
GROWTH_MESSAGE = "growth-message"
GROWTH_CARDS = "growth-metric-cards"
GROWTH_CURVES = "growth-curves"
GROWTH_NOTES = "growth-notes"
GROWTH_COPY = "growth-copy-btn"
GROWTH_RESET = "growth-reset-btn"
GROWTH_STATUS = "growth-status"
GROWTH_LADDERS = "growth-ladders"          # store: the values each slider position stands for
GROWTH_PENDING = "growth-pending"          # store: the form values the copy button would push

# config sidebar; each schema field's id is FieldInfo.component_id (config-<section>-<field>)
CONFIG_TIER = "config-tier"
CONFIG_COMPONENTS = "config-components"
CONFIG_LOAD_PATH = "config-load-path"
CONFIG_LOAD_BTN = "config-load-btn"
CONFIG_SAVE_PATH = "config-save-path"
CONFIG_SAVE_BTN = "config-save-btn"
CONFIG_SAVE_PENDING = "config-save-pending"   # the existing file a second Save overwrites
CONFIG_RESET_BTN = "config-reset-btn"
CONFIG_FILE_STATUS = "config-file-status"
CONFIG_ACCORDION = "config-accordion"
CONFIG_VALIDATION = "config-validation"
CONFIG_DERIVED = "config-derived"
CONFIG_LR_PREVIEW = "config-lr-preview"
CONFIG_FORM_STORE = "config-form-store"    # localStorage: the form survives a reload
CONFIG_INJECT = "config-inject"            # other tabs put {dotted key: value} here to fill the form
# training control
CONFIG_RUNNER = "config-runner"
CONFIG_RUNNER_NOTE = "config-runner-note"
CONFIG_RUN_NAME = "config-run-name"
CONFIG_SIM_RATE = "config-sim-rate"
CONFIG_START = "config-start-btn"
CONFIG_STOP = "config-stop-btn"
CONFIG_STOP_CONFIRM = "config-stop-confirm"   # "Stop run X?" before SIGTERM is sent
CONFIG_STATUS = "config-status"
CONFIG_CONTROL_MSG = "config-control-msg"  # store: the last start/stop/resume outcome
RESUME_CHECKPOINT = "resume-checkpoint"
RESUME_BTN = "resume-btn"
RESUME_CONTROLS = "resume-controls"   # checkpoint picker + Resume; hidden for Forge runs
# training tab chart controls
TRAINING_SMOOTHING = "training-smoothing"
TRAINING_LOGY = "training-logy"
TRAINING_CHART_STATE = "training-chart-state"
# compression tab
COMPRESS_FILE_PATH = "compress-file-path"
COMPRESS_FILE_UPLOAD = "compress-file-upload"
COMPRESS_UPLOAD_STATUS = "compress-upload-status"
COMPRESS_UPLOAD_HINT = "compress-upload-hint"
COMPRESS_UPLOAD_PICKED = "compress-upload-picked"  # store: name/size of a chosen file (assets JS)
COMPRESS_PROFILE = "compress-profile"
COMPRESS_CHECKPOINT = "compress-checkpoint"
COMPRESS_MODEL = "compress-model"            # coding model: the store's, or a checkpoint of the run
COMPRESS_MODEL_NOTE = "compress-model-note"
COMPRESS_BTN = "compress-btn"
COMPRESS_CANCEL_BTN = "compress-cancel-btn"
COMPRESS_PROGRESS = "compress-progress"
COMPRESS_STATUS = "compress-status"
COMPRESS_RESULTS_TABLE = "compression-results-table"
COMPRESS_JOB_SELECT = "compress-job-select"
COMPRESS_COMPARISON = "compress-comparison-graph"
COMPRESS_VERIFY_BTN = "compress-verify-btn"
COMPRESS_VERIFY_RESULT = "compress-verify-result"
COMPRESS_VERSION = "compress-data-version"
COMPRESS_ACTION = "compress-action"          # store: outcome of the last button press
# evaluation tab
EVAL_ENWIK8_BTN = "eval-enwik8-btn"
EVAL_CANCEL_BTN = "eval-cancel-btn"
EVAL_CHECKPOINT = "eval-checkpoint"
EVAL_MODEL = "eval-model"
EVAL_MODEL_NOTE = "eval-model-note"
EVAL_MAX_BYTES = "eval-max-bytes"
EVAL_PROFILE = "eval-profile"
EVAL_DATA_NOTE = "eval-data-note"
EVAL_PROGRESS = "eval-progress"
EVAL_STATUS = "eval-status"
EVAL_RESULTS_TABLE = "eval-results-table"
EVAL_ROUNDTRIP_STATUS = "eval-roundtrip-status"
EVAL_BPB_HISTORY = "eval-bpb-history"
EVAL_VERSION = "eval-data-version"
EVAL_ACTION = "eval-action"
# tab ids (the other tabs' ids sit with their components)
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

# datasets tab
TAB_DATASETS = "tab-datasets"
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
# generate / playground tab
TAB_GENERATE = "tab-generate"
GEN_INFO = "generate-model-info"
GEN_CHECKPOINT = "generate-checkpoint"
GEN_PROMPT = "generate-prompt"
GEN_TEMPERATURE = "generate-temperature"
GEN_TOP_K = "generate-top-k"
GEN_MAX_BYTES = "generate-max-bytes"
GEN_SEED = "generate-seed"
GEN_START = "generate-start-btn"
GEN_CANCEL = "generate-cancel-btn"
GEN_OUTPUT = "generate-output"
GEN_STATUS = "generate-status"
GEN_POLL = "generate-poll"
GEN_JOB = "generate-job"
SURPRISAL_TEXT = "surprisal-text"
SURPRISAL_BTN = "surprisal-btn"
SURPRISAL_CANCEL = "surprisal-cancel-btn"
SURPRISAL_STATUS = "surprisal-status"
SURPRISAL_SUMMARY = "surprisal-summary"
SURPRISAL_VIEW = "surprisal-view"
SURPRISAL_POLL = "surprisal-poll"
SURPRISAL_JOB = "surprisal-job"
# notifications and watchdog
NOTIFY_SEEN = "notify-seen"                      # localStorage: last states seen (no repeat toasts)
NOTIFY_EVENTS = "notify-events"                  # the latest tick's events (desktop notifications)
NOTIFY_TOASTS = "notify-toasts"
NOTIFY_ENABLE = "notify-enable-btn"              # asks the browser's permission (a user click)
NOTIFY_PERMISSION = "notify-permission"
NOTIFY_SHOWN = "notify-shown"


def growth_slider_id(key: str) -> str:
    """The Growth tab's slider of one knob, e.g. model.d_model -> growth-d-model."""
    return "growth-" + key.rsplit(".", 1)[1].replace("_", "-")


def growth_value_id(key: str) -> str:
    """The readout beside a Growth slider (the value the slider position stands for)."""
    return growth_slider_id(key) + "-value"


# compare tab, charts, presets, run management, Forge runs
TAB_COMPARE = "tab-compare"
COMPARE_RUNS = "compare-runs"                    # multi-select: 2-8 runs, ours and Forge's
COMPARE_AXIS = "compare-axis"                    # step | bytes | time
COMPARE_SMOOTHING = "compare-smoothing"
COMPARE_LOGY = "compare-logy"
COMPARE_FOLLOW = "compare-follow"                # follow live: autorange x on every refresh
COMPARE_GRAPH = "compare-graph"
COMPARE_MESSAGE = "compare-message"
COMPARE_TABLE = "compare-table"
COMPARE_CSV_BTN = "compare-csv-btn"
COMPARE_CSV = "compare-csv-download"
COMPARE_STATE = "compare-state"                  # memory: data signature and zoom window
COMPARE_SYSTEM_GRAPH = "compare-system-graph"    # one system metric of every picked run
COMPARE_SYSTEM_METRIC = "compare-system-metric"  # cpu_percent | rss_bytes | gpu_util | ...
COMPARE_SYSTEM_NOTE = "compare-system-note"      # the runs the System chart leaves out, and why
COMPARE_SYSTEM_STATE = "compare-system-state"    # memory: what the System chart last drew
TRAINING_FOLLOW = "training-follow"              # the loss chart's follow-live switch
TRAINING_CSV_BTN = "training-csv-btn"            # the run's metrics as CSV
TRAINING_CSV = "training-csv"
TRAINING_REPORT_BTN = "training-report-btn"      # a self-contained HTML report of the run
TRAINING_REPORT = "training-report"
TRAINING_SYSTEM = "training-system-graph"      # CPU, memory, GPU and disk of the run's process
TRAINING_SYSTEM_STATE = "training-system-state"
TRAINING_ZOOM = "training-zoom"                  # memory: the loss chart's zoom window
TAB_RUNS = "tab-runs"
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
PRESET_NAME = "preset-name"
PRESET_SAVE_BTN = "preset-save-btn"
PRESET_DELETE_BTN = "preset-delete-btn"
PRESET_STATUS = "preset-status"
CONFIG_EXPORT_YAML = "config-export-yaml-btn"
CONFIG_EXPORT_JSON = "config-export-json-btn"
CONFIG_EXPORT = "config-export-download"
CONFIG_IMPORT = "config-import-upload"
RUNS_DELETE_TARGET = "runs-delete-target"              # memory: the run the open dialog deletes
COMPARE_ZOOM = "compare-zoom"                          # memory: the compare chart's held x range
TRAINING_ZOOM_SEEN = "training-zoom-seen"              # memory: the loss chart draws seen so far
TRAINING_SMOOTH_METHOD = "training-smooth-method"      # EMA, running mean or none
TRAINING_CLIP = "training-clip-outliers"               # clip loss outliers before smoothing
TRAINING_THROUGHPUT = "training-throughput-graph"      # tokens/s against step


# Every tab, in the order of the tab bar; a tab's refresh-driven callbacks listen to
# tab_tick(tab), which a clientside callback advances only while that tab is shown and only when
# the page pulse changed, so hidden tabs and idle ticks cost no request (gui/pages/header/ticks.py).
TAB_IDS = (TAB_TRAINING, TAB_COMPARE, TAB_RUNS, TAB_ARCH, TAB_ROUTING, TAB_MOD, TAB_ACTIVATIONS,
           TAB_BRAIN, TAB_COMPRESSION, TAB_EVAL, TAB_GROWTH, TAB_DATASETS, TAB_GENERATE)


def tab_tick(tab: str) -> str:
    return f"{TAB_TICK}-{tab}"


# each tab's pane, built the first time the tab is shown (gui/panes.py)
PANES_MOUNTED = "panes-mounted"                        # memory: the tabs whose pane is built


def pane(tab: str) -> str:
    return f"pane-{tab}"


# checkpoint markers on the Training tab's loss chart: a click selects that checkpoint in every
# picker of the same run (gui/pages/training/checkpoint_select.py)
SELECTED_CHECKPOINT = "selected-checkpoint"            # memory: {"run", "checkpoint", "ts"}
TRAINING_CHECKPOINT_NOTE = "training-checkpoint-note"  # what the last marker click selected
TRAINING_XSYNC = "training-xsync"    # memory: the x range the Training charts share (clientside)
TRAINING_SHARED_X = (TRAINING_LOSS, TRAINING_LR, TRAINING_THROUGHPUT, TRAINING_SYSTEM)


def x_zoom(graph: str) -> str:
    """Memory store: `graph`'s last x-axis zoom, pan or double-click, {"event": relayoutData,
    "at": ms} (gui/components/zoom_events.py); its other relayout events are not passed on."""
    return f"{graph}-x-zoom"


def pick_seen(picker: str) -> str:
    """Memory store: the stamp of the last selection `picker` applied (a later manual pick wins)."""
    return f"{picker}-pick-seen"
