"""The Activations tab's own component ids (spec strings unchanged; the ids other parts share are
in gui/ids.py)."""
ACT_MESSAGE = "activation-message"
ACT_STEP = "activation-step-slider"
ACT_STEP_LABEL = "activation-step-label"
ACT_DIST = "activation-dist"
ACT_HEATMAP = "activation-heatmap"
ACT_VERSION = "activation-data-version"
