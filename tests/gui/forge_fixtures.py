"""Forge run folders written to the documented format (Forge Studio RESEARCH.md, sections 3-4):
log.csv (header once, one row per step, val_loss=-1 when no eval, appended without a second
header after a resume) and ckpt_%06d.bin + ckpt_latest.bin."""
from __future__ import annotations

import math
from pathlib import Path

HEADER7 = "step,loss,lr,grad_norm,tokens_per_sec,val_loss,elapsed_s"
HEADER6 = "step,loss,lr,grad_norm,tokens_per_sec,val_loss"


def row(step: int, elapsed: float | None = None, eval_every: int = 50, spike: bool = False) -> str:
    """One log line as Forge prints it (%.6f loss, %.6e lr, val on step % eval_every == eval_every-1)."""
    loss = 2.2 + 3.0 / math.sqrt(step + 1) + (4.0 if spike else 0.0)
    val = loss + 0.05 if step % eval_every == eval_every - 1 else -1.0
    fields = [f"{step}", f"{loss:.6f}", f"{3.68e-4:.6e}", f"{0.55 + 0.1 * math.sin(step):.6f}",
              "13692.0", f"{val:.6f}"]
    if elapsed is not None:
        fields.append(f"{elapsed:.3f}")
    return ",".join(fields)


def write_forge_run(folder: Path, steps: int = 300, columns: int = 7, checkpoint_every: int = 100,
                    resume_from: int | None = None, resume_upto: int | None = None) -> Path:
    """A Forge run folder. With `resume_from`, the first attempt ran to `resume_upto` (then died)
    and the resumed run appended rows from `resume_from` to `steps` (elapsed restarting at 0)."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = [HEADER7 if columns == 7 else HEADER6]
    first_end = resume_upto if resume_from is not None else steps
    for s in range(first_end):
        lines.append(row(s, s * 0.5 if columns == 7 else None))
    if resume_from is not None:
        for s in range(resume_from, steps):
            lines.append(row(s, (s - resume_from) * 0.5 if columns == 7 else None))
    (folder / "log.csv").write_text("\n".join(lines) + "\n")
    for s in range(checkpoint_every, steps + 1, checkpoint_every):
        (folder / f"ckpt_{s:06d}.bin").write_bytes(b"FRGE" + bytes(60))
    (folder / "ckpt_latest.bin").write_bytes(b"FRGE" + bytes(60))
    return folder


def append_forge_rows(folder: Path, steps: range, columns: int = 7) -> None:
    """Rows for `steps` appended to a Forge log.csv in one write, each line whole (as a live
    Forge run adds them; elapsed continues at 0.5 s a step), so a reader never sees half a row."""
    text = "".join(row(s, s * 0.5 if columns == 7 else None) + "\n" for s in steps)
    with open(folder / "log.csv", "a") as fh:
        fh.write(text)
