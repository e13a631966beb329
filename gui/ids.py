"""The component ids more than one part of the cockpit uses (spec ids are binding). An id one page
alone uses lives in gui/pages/<page>/ids.py; tests/gui/test_layers.py holds every id unique."""

# header / run selection
RUN_SELECT = "run-select"
TAB_TICK = "tab-tick"          # one store per tab: the refresh tick, written for the visible tab only
PULSE = "refresh-pulse"        # the server's answer to a tick: a signature of what pages show
HEADER_TICK = "header-tick"    # advanced when the pulse changes: run list, status, notifications
TABS = "main-tabs"

# tabs
TAB_TRAINING = "tab-training"
TAB_COMPARE = "tab-compare"
TAB_RUNS = "tab-runs"
TAB_ARCH = "tab-arch"
TAB_ROUTING = "tab-routing"
TAB_MOD = "tab-mod"
TAB_ACTIVATIONS = "tab-activations"
TAB_BRAIN = "tab-brain"
TAB_COMPRESSION = "tab-compression"
TAB_EVAL = "tab-eval"
TAB_GROWTH = "tab-growth"
TAB_DATASETS = "tab-datasets"
TAB_GENERATE = "tab-generate"

# Every tab, in tab bar order; a tab's refresh callbacks listen to tab_tick(tab), advanced only while
# it is shown and the page pulse changed (gui/pages/header/ticks.py).
TAB_IDS = (TAB_TRAINING, TAB_COMPARE, TAB_RUNS, TAB_ARCH, TAB_ROUTING, TAB_MOD, TAB_ACTIVATIONS,
           TAB_BRAIN, TAB_COMPRESSION, TAB_EVAL, TAB_GROWTH, TAB_DATASETS, TAB_GENERATE)


def tab_tick(tab: str) -> str:
    return f"{TAB_TICK}-{tab}"


# each tab's pane, built the first time the tab is shown (gui/panes.py)
PANES_MOUNTED = "panes-mounted"                        # memory: the tabs whose pane is built


def pane(tab: str) -> str:
    return f"pane-{tab}"


# config form (the sidebar), written by other tabs too
CONFIG_TIER = "config-tier"
CONFIG_INJECT = "config-inject"            # other tabs put {dotted key: value} here to fill the form

# checkpoint pickers: the pane builder fills them, their tab acts on them
RESUME_CHECKPOINT = "resume-checkpoint"
RESUME_BTN = "resume-btn"
COMPRESS_CHECKPOINT = "compress-checkpoint"
COMPRESS_MODEL = "compress-model"            # coding model: the store's, or a checkpoint of the run
EVAL_CHECKPOINT = "eval-checkpoint"
EVAL_MODEL = "eval-model"
GEN_CHECKPOINT = "generate-checkpoint"

# a click on a loss-chart checkpoint selects it in every picker of the run (training/checkpoint_select.py)
SELECTED_CHECKPOINT = "selected-checkpoint"            # memory: {"run", "checkpoint", "ts"}


def pick_seen(picker: str) -> str:
    """Memory store: the stamp of the last selection `picker` applied (a later manual pick wins)."""
    return f"{picker}-pick-seen"


def x_zoom(graph: str) -> str:
    """Memory store: `graph`'s last x-axis zoom, pan or double-click (components/zoom_events.py)."""
    return f"{graph}-x-zoom"
