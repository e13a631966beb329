"""Callback registration: one module per tab, each with `register(app)` (spec WS7)."""
from .run_callbacks import register as reg_run
from .training_callbacks import register as reg_training


def register_all_callbacks(app) -> None:
    for reg in (reg_run, reg_training):
        reg(app)
