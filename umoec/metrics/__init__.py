"""Metrics of a run: the SQLite schema and writer, and training.log (log.csv: umoec.run.csvlog)."""
from .db import TrainingDB, connect
from .logs import TextLog
from .schema import SCHEMA_VERSION, STEP_TABLES, migrate

__all__ = ["SCHEMA_VERSION", "STEP_TABLES", "TextLog", "TrainingDB", "connect", "migrate"]
