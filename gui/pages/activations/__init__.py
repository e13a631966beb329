"""The Activations tab: per-block activation distributions and statistics at a step."""
