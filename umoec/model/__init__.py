"""The u-moec-tiny byte model (imports torch; `umoec.sizing` has its torch-free sizes).

    model = build_model(cfg)
    out = model(x, g=None, targets=None, return_hidden=False)     # parallel form, ModelOutput
    state = model.init_state(batch_size, g=None)
    logits, state = model.step(byte, state)                      # recurrent form (the codec's)

See docs/model.md for the architecture and every config field's effect.
"""
from .model import UMoEModel, build_model
from .output import ModelOutput
from .state import ModelState

__all__ = ["ModelOutput", "ModelState", "UMoEModel", "build_model"]
