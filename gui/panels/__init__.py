"""Pure layout functions, one module per tab (no callbacks, no I/O)."""
