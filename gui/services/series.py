"""A run's training series for the Training tab, kept between refreshes and read incrementally."""
from __future__ import annotations

import os
import sqlite3
from collections.abc import Sequence

import pandas as pd

from umoec.metrics import read

from .cache import SignatureCache

_SERIES = SignatureCache(8)   # train_series of the runs shown lately, extended as they grow


def cached_train_series(conn: sqlite3.Connection, path: str | os.PathLike,
                        columns: Sequence[str]) -> pd.DataFrame:
    """train_series(conn, columns) of the database at `path`, kept between calls and extended
    with the rows logged since (200,000 rows take ~0.25 s to read). Keyed by the run's first row
    (a run recreated under the same name is another run), its generation (a resume rewrites rows)
    and its newest step. The frame is shared: callers must not modify it."""
    try:  # which run's rows: a run recreated under the same name logged its first row later
        first = conn.execute("SELECT step, ts FROM train_metrics ORDER BY step LIMIT 1").fetchone()
    except sqlite3.OperationalError:
        first = None
    ident = (first, read.run_generation(conn))
    last = read.latest_step(conn)

    def build(stale):
        if stale is not None and stale[0] == ident and len(stale[1]) and last is not None:
            old = stale[1]
            had = int(old["step"].iloc[-1])
            if last >= had:
                new = read.train_series(conn, columns, since_step=had)
                return ident, (pd.concat([old, new], ignore_index=True) if len(new) else old)
        return ident, read.train_series(conn, columns)

    return _SERIES.get((str(path), tuple(columns)), (ident, last), build)[1]
