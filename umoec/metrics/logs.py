"""The two plain-text logs of a run: log.csv (Forge-compatible) and training.log (for humans).

Both are opened in append mode and flushed per line, so a resumed run continues the same files
(no second CSV header) and a killed run loses at most the line being written.
"""
from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Optional, TextIO

CSV_COLUMNS = ("step", "loss", "lr", "grad_norm", "tokens_per_sec", "val_loss", "elapsed_s")


class CsvLog:
    """log.csv: step,loss,lr,grad_norm,tokens_per_sec,val_loss,elapsed_s (val_loss=-1: no eval)."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        new = not self.path.exists() or self.path.stat().st_size == 0
        self._fh: Optional[TextIO] = open(self.path, "a", encoding="utf-8", newline="")
        if new:
            self._fh.write(",".join(CSV_COLUMNS) + "\n")
            self._fh.flush()

    def write(self, step: int, loss: float, lr: float, grad_norm: float, tokens_per_sec: float,
              elapsed_s: float, val_loss: Optional[float] = None) -> None:
        val = -1.0 if val_loss is None else val_loss
        self._fh.write(f"{step},{loss:.6f},{lr:.6e},{grad_norm:.6f},{tokens_per_sec:.1f},"
                       f"{val:.6f},{elapsed_s:.3f}\n")
        self._fh.flush()

    def close(self) -> None:
        if self._fh:
            self._fh.close()
            self._fh = None


class TextLog:
    """training.log: timestamped human-readable lines (the cockpit tails this file)."""

    def __init__(self, path: str | os.PathLike, echo: bool = False):
        self.path = Path(path)
        self.echo = echo
        self._fh: Optional[TextIO] = open(self.path, "a", encoding="utf-8")

    def line(self, text: str) -> None:
        stamped = time.strftime("%Y-%m-%d %H:%M:%S ") + text
        self._fh.write(stamped + "\n")
        self._fh.flush()
        if self.echo:
            print(stamped, flush=True)

    def step(self, step: int, loss: float, lr: float, grad_norm: float, tokens_per_sec: float,
             val_loss: Optional[float] = None) -> None:
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
