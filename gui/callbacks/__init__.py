"""Callback registration: one module per tab, each with `register(app)` (spec WS7)."""
from .config_callbacks import register as reg_config
from .run_callbacks import register as reg_run
from .training_callbacks import register as reg_training
from .activation_callbacks import register as reg_activation
from .brain_callbacks import register as reg_brain
from .mod_callbacks import register as reg_mod
from .routing_callbacks import register as reg_routing


def register_all_callbacks(app) -> None:
    for reg in (reg_run, reg_training, reg_routing, reg_mod, reg_activation, reg_brain, reg_config):
        reg(app)
