"""The Architecture tab's own component ids (spec strings unchanged; the ids other parts share are
in gui/ids.py)."""
ARCH_MESSAGE = "arch-message"
ARCH_CARDS = "arch-metric-cards"
ARCH_DIAGRAM = "arch-diagram"
ARCH_TABLE = "arch-block-table"
