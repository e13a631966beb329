"""The live Training charts, extended by dash.Patch between full draws (our runs: callbacks.py,
Forge runs: forge.py); the trace order is figures.training.LOSS_TRACES and the lr/throughput
charts' own."""
from __future__ import annotations

import numpy as np
from dash import Patch, no_update

from ...figures.series import MAX_POINTS, Smoothing, smooth_continue
from ...figures.training import best_val_name

REDRAW_AFTER = 2 * MAX_POINTS   # points in a trace before it is downsampled again


def _extend(patch: Patch, first: int, steps: list, *columns) -> None:
    """Append `steps` and each of `columns` to traces first, first + 1, ... of `patch`."""
    for trace, ys in enumerate(columns, first):
        patch["data"][trace]["x"].extend(steps)
        patch["data"][trace]["y"].extend(np.asarray(ys, dtype=float).tolist())


def extend_train(new, bits: np.ndarray, smoothing: Smoothing, state: dict) -> tuple:
    """(loss, lr, throughput) appending the rows `new` (step, lr, grad_norm, tokens_per_sec;
    `bits` the loss chart's values): the loss an empty Patch and the others no_update without
    rows. Carries the smoothing, last_step and points of `state` on, in place."""
    if not len(new):
        return Patch(), no_update, no_update
    loss, lr, throughput = Patch(), Patch(), Patch()
    steps = new["step"].tolist()
    smoothed, state["smooth"] = smooth_continue(bits, smoothing, state["smooth"])
    _extend(loss, 0, steps, bits, smoothed)
    _extend(lr, 0, steps, new["lr"], new["grad_norm"])
    _extend(throughput, 0, steps, new["tokens_per_sec"])
    state.update(last_step=int(steps[-1]), points=state["points"] + len(steps))
    return loss, lr, throughput


def extend_val(loss: Patch, steps, bits, best: tuple | None = None) -> None:
    """Append validation points to `loss`; `best` (step, bits): the best point moved there."""
    _extend(loss, 2, list(steps), bits)
    if best is not None:
        loss["data"][3]["x"] = [int(best[0])]
        loss["data"][3]["y"] = [float(best[1])]
        loss["data"][3]["name"] = best_val_name(best[1])
