"""What a tab says about a run's metrics database it cannot read (no Dash, no I/O)."""
from __future__ import annotations

from umoec.metrics.read import transient


def db_read_error(path, exc: BaseException) -> str:
    """What a tab says about a metrics database it cannot read: retry only when that can help."""
    text = str(exc)
    if transient(exc):
        return f"{path} is busy ({text}); the next refresh will try again."
    if "not a database" in text or "malformed" in text:
        return (f"Cannot read {path}: {text}. The file is damaged or not a database, so this tab "
                "cannot show this run (its log.csv and training.log still hold the training "
                "metrics).")
    return f"Cannot read {path}: {text}"
