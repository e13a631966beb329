"""The top bar: run selector and status (callbacks.py), the refresh tick (ticks.py),
the tab bar and its panes (panes.py; gui/panes.py)."""
from ..base import registers
from . import callbacks, panes, ticks

register = registers(callbacks.register, ticks.register, panes.register)
