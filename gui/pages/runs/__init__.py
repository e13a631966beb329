"""The Runs tab: every run in a sortable list; rename, delete, notes."""
