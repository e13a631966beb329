"""The run folder: layout, frozen config, status heartbeat (see shared/design/CONTRACTS.md)."""
from .layout import RunDir
from .status import RunState, RunStatus, effective_state, pid_alive

__all__ = ["RunDir", "RunState", "RunStatus", "effective_state", "pid_alive"]
