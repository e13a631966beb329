"""The Growth tab's own component ids (the shared ones are in gui/ids.py); one slider per knob."""
GROWTH_MESSAGE = "growth-message"
GROWTH_CARDS = "growth-metric-cards"
GROWTH_CURVES = "growth-curves"
GROWTH_NOTES = "growth-notes"
GROWTH_COPY = "growth-copy-btn"
GROWTH_RESET = "growth-reset-btn"
GROWTH_STATUS = "growth-status"
GROWTH_LADDERS = "growth-ladders"          # store: the values each slider position stands for
GROWTH_PENDING = "growth-pending"          # store: the form values the copy button would push


def growth_slider_id(key: str) -> str:
    """The Growth tab's slider of one knob, e.g. model.d_model -> growth-d-model."""
    return "growth-" + key.rsplit(".", 1)[1].replace("_", "-")


def growth_value_id(key: str) -> str:
    """The readout beside a Growth slider (the value the slider position stands for)."""
    return growth_slider_id(key) + "-value"
