"""Thin command-line entry points: `python -m bin.<name>` (see shared/design/CONTRACTS.md)."""
