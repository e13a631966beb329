"""log.csv: the one writer and the one reader of a run's CSV log (CONTRACTS.md "A run folder").

    step,loss,lr,grad_norm,tokens_per_sec,val_loss,elapsed_s        (val_loss=-1: no evaluation)

The format is Forge's (Forge Studio RESEARCH.md, sections 3 and 4), so the cockpit reads a Forge
run's log.csv and ours with the same parser. The writer (CsvLog) opens the file in append mode and
flushes per line, so a resumed run continues the same file (no second header) and a killed run
loses at most the line being written.

Rules the reader (parse_log_csv, read_log_csv) keeps:
- columns are found by the header's names (older Forge builds write 6 columns, without
  elapsed_s); a file without a header gets the documented column order by its field count;
- val_loss = -1 means "no evaluation at this step" (any negative value is treated the same);
- after a resume the file is reopened in append mode without a second header, so steps go
  back: a row for step s supersedes every earlier row at step >= s (the resumed run rewrites
  that stretch; rows of the dead attempt beyond it are dropped, not shown as if trained twice);
- elapsed_s restarts at a resume; segments are joined so the time axis keeps growing;
- a last line without its newline is being written: it is left for the next read;
- a line with the wrong number of fields or a non-numeric step is skipped and counted; a 6-column
  log continued by a 7-column build (or the other way round) is read by each line's field count.

Imports no numpy or pandas until a log is read (the trainer and the metrics package stay light).
"""
from __future__ import annotations

import io
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

CSV_COLUMNS = ("step", "loss", "lr", "grad_norm", "tokens_per_sec", "val_loss", "elapsed_s")
REQUIRED = ("step", "loss")
_NAN_WORDS = ("nan", "-nan", "+nan", "inf", "-inf", "+inf", "infinity", "-infinity")


# == writing ====================================================================================
class CsvLog:
    """log.csv: step,loss,lr,grad_norm,tokens_per_sec,val_loss,elapsed_s (val_loss=-1: no eval)."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        new = not self.path.exists() or self.path.stat().st_size == 0
        self._fh: TextIO | None = open(self.path, "a", encoding="utf-8", newline="")  # noqa: SIM115
        if new:
            self._fh.write(",".join(CSV_COLUMNS) + "\n")
            self._fh.flush()

    def write(self, step: int, loss: float, lr: float, grad_norm: float, tokens_per_sec: float,
              elapsed_s: float, val_loss: float | None = None) -> None:
        val = -1.0 if val_loss is None else val_loss
        self._fh.write(f"{step},{loss:.6f},{lr:.6e},{grad_norm:.6f},{tokens_per_sec:.1f},"
                       f"{val:.6f},{elapsed_s:.3f}\n")
        self._fh.flush()

    def close(self) -> None:
        if self._fh:
            self._fh.close()
            self._fh = None


# == reading ====================================================================================
class CsvLogError(ValueError):
    """A log.csv cannot be read in this format; the message says why."""


@dataclass
class ParsedCsvLog:
    """A parsed log.csv: one row per step (resumes resolved), oldest first."""

    train: pd.DataFrame            # step, loss, lr, grad_norm, tokens_per_sec, elapsed_s (float)
    val: pd.DataFrame              # step, val_loss: the rows with an evaluation
    columns: tuple[str, ...]       # the header's columns
    rows_read: int = 0             # data lines parsed
    skipped: int = 0               # malformed lines ignored
    superseded: int = 0            # rows replaced by a resume
    resumes: int = 0               # times the step went back
    partial_tail: bool = False     # a last line without its newline was left out
    notes: list[str] = field(default_factory=list)

    @property
    def has_elapsed(self) -> bool:
        return "elapsed_s" in self.train and bool(self.train["elapsed_s"].notna().any())


def _header(line: bytes) -> tuple[str, ...] | None:
    """The column names of a header line, or None if the line is data."""
    text = line.decode("utf-8", errors="replace").strip().lstrip("\ufeff")
    if not text or not (text[0].isalpha() or text[0] == "_"):
        return None
    return tuple(c.strip().lower() for c in text.split(","))


def _default_columns(n_fields: int) -> tuple[str, ...]:
    if n_fields in (6, 7):
        return CSV_COLUMNS[:n_fields]
    raise CsvLogError(f"log.csv has no header and {n_fields} fields per line (Forge writes "
                      "6 or 7: step,loss,lr,grad_norm,tokens_per_sec,val_loss[,elapsed_s])")


def _read_block(body: bytes, columns: tuple[str, ...]) -> pd.DataFrame | None:
    """Fast path: every line has len(columns) numeric fields. None when that is not so."""
    import numpy as np
    import pandas as pd
    try:
        return pd.read_csv(io.BytesIO(body), header=None, names=list(columns), dtype=np.float64,
                           engine="c", skip_blank_lines=True)
    except (ValueError, pd.errors.ParserError):
        return None


def _slow_rows(lines: list[bytes], columns: tuple[str, ...]) -> tuple[pd.DataFrame, int]:
    """Line by line: honours repeated headers and 6/7-field lines; counts what it skips."""
    import pandas as pd
    groups: dict[tuple[str, ...], tuple[list[int], list[bytes]]] = {}
    skipped = 0
    current = columns
    forge_like = columns == CSV_COLUMNS[:len(columns)]
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        head = _header(line)
        if head is not None:
            if REQUIRED[0] in head and REQUIRED[1] in head:
                current = head
                forge_like = head == CSV_COLUMNS[:len(head)]
            else:
                skipped += 1
            continue
        n = line.count(b",") + 1
        if n == len(current):
            cols = current
        elif forge_like and n in (6, 7):  # an old 6-column log resumed by a newer build, or back
            cols = CSV_COLUMNS[:n]
        else:
            skipped += 1
            continue
        order, chunk = groups.setdefault(cols, ([], []))
        order.append(i)
        chunk.append(line)
    frames = []
    for cols, (order, chunk) in groups.items():
        df = pd.read_csv(io.BytesIO(b"\n".join(chunk)), header=None, names=list(cols), dtype=str,
                         engine="c", skip_blank_lines=False, keep_default_na=False)
        text = df.apply(lambda s: s.str.strip())
        num = text.apply(lambda s: pd.to_numeric(s, errors="coerce"))
        # a field that is not a number (nan/inf are numbers: a diverged loss) spoils its line
        garbage = (num.isna() & ~text.apply(lambda s: s.str.lower().isin(_NAN_WORDS))).any(axis=1)
        num["_order"] = order
        frames.append(num.loc[~garbage.to_numpy()])
        skipped += int(garbage.sum())
    if not frames:
        return pd.DataFrame(columns=[*columns, "_order"]), skipped
    out = pd.concat(frames, ignore_index=True).sort_values("_order", kind="stable")
    bad = out["step"].isna()
    return out.loc[~bad].reset_index(drop=True), skipped + int(bad.sum())


def _resolve_resumes(steps: np.ndarray) -> tuple[np.ndarray, int]:
    """Mask of the rows to keep: a row survives unless a later row has a step <= its own."""
    import numpy as np
    n = len(steps)
    if n == 0:
        return np.ones(0, dtype=bool), 0
    later_min = np.empty(n, dtype=np.float64)
    later_min[-1] = np.inf
    if n > 1:
        later_min[:-1] = np.minimum.accumulate(steps[::-1])[::-1][1:]
    resumes = int(np.count_nonzero(np.diff(steps) <= 0)) if n > 1 else 0
    return steps < later_min, resumes


def _join_elapsed(elapsed: np.ndarray) -> np.ndarray:
    """Make elapsed_s keep growing across resumes (it restarts at each one)."""
    import numpy as np
    e = np.asarray(elapsed, dtype=np.float64)
    if len(e) < 2:
        return e
    prev = e[:-1]
    reset = np.diff(e) < 0
    offset = np.concatenate([[0.0], np.cumsum(np.where(reset, prev, 0.0))])
    return e + offset


def parse_log_csv(data: bytes | str) -> ParsedCsvLog:
    """Parse the bytes of a log.csv (see the module docstring for the rules)."""
    import numpy as np
    import pandas as pd
    if isinstance(data, str):
        data = data.encode("utf-8")
    notes: list[str] = []
    partial = False
    if data and not data.endswith(b"\n"):
        cut = data.rfind(b"\n")
        data, partial = (data[:cut + 1] if cut >= 0 else b""), True
        notes.append("the last line has no newline yet (being written): left for the next read")
    if b"\r" in data:
        data = data.replace(b"\r\n", b"\n")
    start = 0
    while start < len(data) and data[start:start + 1] in (b"\n", b" ", b"\t"):
        start += 1
    if start >= len(data):
        empty = pd.DataFrame(columns=["step", "loss", "lr", "grad_norm", "tokens_per_sec", "elapsed_s"])
        return ParsedCsvLog(empty, pd.DataFrame(columns=["step", "val_loss"]), CSV_COLUMNS, 0, 0,
                            0, 0, partial, notes + ["log.csv has no rows yet"])
    end = data.find(b"\n", start)
    first = data[start:end]
    columns = _header(first)
    if columns is None:  # no header: the documented order, by field count
        columns = _default_columns(first.count(b",") + 1)
        body = data[start:]
        notes.append("log.csv has no header; read as " + ",".join(columns))
    else:
        body = data[end + 1:]
    missing = [c for c in REQUIRED if c not in columns]
    if missing:
        raise CsvLogError(f"log.csv header {','.join(columns)!r} lacks {', '.join(missing)} "
                          "(not a Forge log?)")
    n_lines = body.count(b"\n")
    # fast path when every line has the header's field count (a repeated header or any other
    # text makes the float parse fail and falls through to the line-by-line path)
    uniform = (body.count(b",") == n_lines * (len(columns) - 1) and b"\n\n" not in body
               and not body.startswith(b"\n"))
    df = _read_block(body, columns) if uniform and n_lines else None
    skipped = 0
    if df is None:
        df, skipped = _slow_rows(body.split(b"\n"), columns)
        if skipped:
            notes.append(f"{skipped} malformed line(s) skipped")
    else:
        bad = df["step"].isna()
        if bad.any():
            skipped = int(bad.sum())
            df = df.loc[~bad]
    rows_read = len(df)
    steps = df["step"].to_numpy(dtype=np.float64)
    keep, resumes = _resolve_resumes(steps)
    superseded = int(np.count_nonzero(~keep))
    if resumes:
        notes.append(f"{resumes} resume(s): {superseded} earlier row(s) superseded by the resumed run")
    df = df.loc[keep].reset_index(drop=True)
    train = pd.DataFrame({"step": df["step"].to_numpy(dtype=np.int64)})
    for col in ("loss", "lr", "grad_norm", "tokens_per_sec"):
        train[col] = df[col].to_numpy(dtype=np.float64) if col in df else np.nan
    train["elapsed_s"] = (_join_elapsed(df["elapsed_s"].to_numpy(dtype=np.float64))
                          if "elapsed_s" in df else np.nan)
    if "val_loss" in df:
        v = df["val_loss"].to_numpy(dtype=np.float64)
        has = np.isfinite(v) & (v >= 0)
        val = pd.DataFrame({"step": train["step"].to_numpy()[has], "val_loss": v[has]})
    else:
        val = pd.DataFrame({"step": np.zeros(0, dtype=np.int64), "val_loss": np.zeros(0)})
    return ParsedCsvLog(train, val, tuple(columns), rows_read, skipped, superseded, resumes,
                        partial, notes)


def read_log_csv(path: str | os.PathLike) -> ParsedCsvLog:
    """Read and parse the log.csv at `path`; CsvLogError says why it cannot be."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise CsvLogError(f"{path} cannot be read ({exc.strerror or exc})") from None
    return parse_log_csv(data)
