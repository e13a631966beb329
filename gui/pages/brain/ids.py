"""The Brain tab's own component ids (spec strings unchanged; the ids other parts share are in
gui/ids.py)."""
BRAIN_MESSAGE = "brain-message"
BRAIN_BLOCK = "brain-block-select"
BRAIN_STEP = "brain-step-slider"
BRAIN_STEP_LABEL = "brain-step-label"
BRAIN_PCA = "brain-pca"
BRAIN_VERSION = "brain-data-version"
