"""The MoD tab's own component ids (spec strings unchanged; the ids other parts share are in
gui/ids.py)."""
MOD_MESSAGE = "mod-message"
MOD_CARDS = "mod-metric-cards"
MOD_CURRENT = "mod-current"
MOD_HISTORY = "mod-history"
MOD_HISTORY_NOTE = "mod-history-note"
MOD_VERSION = "mod-data-version"
