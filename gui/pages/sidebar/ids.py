"""The config sidebar's own component ids (shared ones: gui/ids.py); a schema field's id is
FieldInfo.component_id (config-<section>-<field>)."""
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
CONFIG_RUNNER = "config-runner"
CONFIG_RUNNER_NOTE = "config-runner-note"
CONFIG_RUN_NAME = "config-run-name"
CONFIG_SIM_RATE = "config-sim-rate"
CONFIG_START = "config-start-btn"
CONFIG_STOP = "config-stop-btn"
CONFIG_STOP_CONFIRM = "config-stop-confirm"   # "Stop run X?" before SIGTERM is sent
CONFIG_STATUS = "config-status"
CONFIG_CONTROL_MSG = "config-control-msg"  # store: the last start/stop/resume outcome


def field_msg_id(component_id: str) -> str:
    """The message line under a config field (error or warning)."""
    return component_id + "-msg"


def section_item_id(section: str) -> str:
    """The accordion item of a config section, e.g. config-section-optimizer-muon."""
    return "config-section-" + section.replace(".", "-").replace("_", "-")
PRESET_NAME = "preset-name"
PRESET_SAVE_BTN = "preset-save-btn"
PRESET_DELETE_BTN = "preset-delete-btn"
PRESET_STATUS = "preset-status"
CONFIG_EXPORT_YAML = "config-export-yaml-btn"
CONFIG_EXPORT_JSON = "config-export-json-btn"
CONFIG_EXPORT = "config-export-download"
CONFIG_IMPORT = "config-import-upload"
