"""Notifications: toasts and desktop notifications of runs that end or stall."""
from ..base import registers
from . import callbacks

register = registers(callbacks.register)
