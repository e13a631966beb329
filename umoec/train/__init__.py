"""Training: optimizers, checkpoints, hidden-state statistics, DDP setup and the loop."""
