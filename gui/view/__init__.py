"""View models: what the pages show, computed from plain values. No Dash, no I/O."""
