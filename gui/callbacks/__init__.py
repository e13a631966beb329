"""Callback registration: one module per tab, each with `register(app)`."""
from .activation_callbacks import register as reg_activation
from .arch_callbacks import register as reg_arch
from .brain_callbacks import register as reg_brain
from .compare_callbacks import register as reg_compare
from .compression_callbacks import register as reg_compression
from .config_callbacks import register as reg_config
from .datasets_callbacks import register as reg_datasets
from .eval_callbacks import register as reg_eval
from .generate_callbacks import register as reg_generate
from .growth_callbacks import register as reg_growth
from .mod_callbacks import register as reg_mod
from .model_export_callbacks import register as reg_model_export
from .notify_callbacks import register as reg_notify
from .pane_callbacks import register as reg_pane
from .presets_callbacks import register as reg_presets
from .routing_callbacks import register as reg_routing
from .run_callbacks import register as reg_run
from .runs_callbacks import register as reg_runs
from .tick_callbacks import register as reg_tick
from .training_callbacks import register as reg_training
from .zoom_callbacks import register as reg_zoom


def register_all_callbacks(app, ctx) -> None:
    for reg in (reg_compare, reg_runs, reg_presets, reg_zoom, reg_run, reg_training, reg_routing,
                reg_mod, reg_activation, reg_brain, reg_arch, reg_growth, reg_config, reg_datasets,
                reg_generate, reg_notify, reg_compression, reg_eval, reg_model_export, reg_tick,
                reg_pane):
        reg(app, ctx)
