"""The training simulator: realistic runs for the cockpit without training."""
