"""Metrics of a run: the SQLite schema and writer, and the plain-text logs."""
from .db import TrainingDB, connect
from .logs import CSV_COLUMNS, CsvLog, TextLog
from .schema import SCHEMA_VERSION, STEP_TABLES, migrate

__all__ = ["CSV_COLUMNS", "CsvLog", "SCHEMA_VERSION", "STEP_TABLES", "TextLog", "TrainingDB",
           "connect", "migrate"]
