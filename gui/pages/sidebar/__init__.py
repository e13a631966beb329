"""The config sidebar: form, tiers, training control (callbacks.py), presets and
config import/export (presets.py)."""
from ..base import registers
from . import callbacks, presets

register = registers(callbacks.register, presets.register)
