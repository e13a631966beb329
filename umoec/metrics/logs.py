"""training.log: the human-readable log of a run (the cockpit tails it).

Opened in append mode and flushed per line, so a resumed run continues the same file and a killed
run loses at most the line being written. log.csv, the other plain-text log, is umoec.run.csvlog
(its writer and its reader).
"""
from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TextIO


class TextLog:
    """training.log: timestamped human-readable lines (the cockpit tails this file)."""

    def __init__(self, path: str | os.PathLike, echo: bool = False):
        self.path = Path(path)
        self.echo = echo
        self._fh: TextIO | None = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 (closed by close())

    def line(self, text: str) -> None:
        stamped = time.strftime("%Y-%m-%d %H:%M:%S ") + text
        self._fh.write(stamped + "\n")
        self._fh.flush()
        if self.echo:
            print(stamped, flush=True)

    def step(self, step: int, loss: float, lr: float, grad_norm: float, tokens_per_sec: float,
             val_loss: float | None = None) -> None:
        """The Forge-style step line: step | loss | lr | gnorm | tok/s [| val]."""
        text = (f"step {step:6d} | loss {loss:.4f} | lr {lr:.2e} | gnorm {grad_norm:.3f} | "
                f"{tokens_per_sec:.0f} tok/s")
        if val_loss is not None:
            text += f" | val {val_loss:.4f}"
        self.line(text)

    def close(self) -> None:
        if self._fh:
            self._fh.close()
            self._fh = None
