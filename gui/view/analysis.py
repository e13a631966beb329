"""What the analysis tabs (routing, MoD, activations, brain) show, as plain values: a probe's
findings, step-slider properties and labels, empty states from a run's config, history notes.
Pure: no Dash, no files, no database (services/analysis.py reads)."""
from __future__ import annotations

import math
import textwrap
from dataclasses import dataclass
from pathlib import Path


def no_run(runs_dir: Path) -> str:
    """The empty state when no run is selected: how to make one in *this* runs folder."""
    return ("No run selected. Create one with: python -m bin.simulate_training --steps 5000 "
            f"--out {Path(runs_dir) / 'demo'}")


# -- what a run's config says (for empty states) ----------------------------------------------
def _section(cfg: dict, name: str) -> dict:
    value = cfg.get(name)
    return value if isinstance(value, dict) else {}


def block_pattern(cfg: dict) -> str | None:
    """model.block_pattern repeated to model.n_blocks, or None if the config does not say."""
    model = _section(cfg, "model")
    pattern, n = model.get("block_pattern"), model.get("n_blocks")
    return (pattern * n)[:n] if isinstance(pattern, str) and pattern and isinstance(n, int) else None


def config_value(cfg: dict, section: str, key: str, default=None):
    return _section(cfg, section).get(key, default)


def missing_snapshots(what: str):
    """An explainer for a table written at evaluations (before the first one it is empty)."""
    def explain(run, cfg: dict, has_metrics: bool) -> str:
        every = config_value(cfg, "logging", "eval_every")
        when = f"every logging.eval_every{f' ({every})' if every else ''} steps"
        state = "yet (before the first evaluation)" if has_metrics or every else "yet"
        return f"No {what} {state}: the trainer writes a snapshot {when}."
    return explain


# -- what a probe of the selected run found ----------------------------------------------------
@dataclass
class Probe:
    """What one cheap look at a run found. `message` set = show it instead of data."""

    run: object = None
    message: str | None = None
    colour: str = "info"
    first: int | None = None
    last: int | None = None
    interval: int | None = None
    generation: int = 0

    @property
    def ok(self) -> bool:
        return self.message is None

    @property
    def version(self) -> dict:
        """Changes exactly when what the tab shows may change (run, restart/resume, new rows)."""
        return {"run": getattr(self.run, "name", None), "gen": self.generation, "last": self.last,
                "message": self.message, "first": self.first}


def wrap(message: str, width: int = 70) -> str:
    """A message for a figure annotation, broken onto lines of about `width` characters."""
    return "<br>".join(textwrap.wrap(message, width, break_long_words=False, break_on_hyphens=False))


# -- step sliders -------------------------------------------------------------------------------
def short_step(n: int) -> str:
    """Compact slider mark: 950, 12k, 1.5k, 200k, 1.2M."""
    if n < 1000:
        return str(n)
    unit, scale = ("k", 1000) if n < 1_000_000 else ("M", 1e6)
    return f"{n / scale:.1f}".rstrip("0").rstrip(".") + unit


def slider_marks(first: int, last: int, n: int = 6) -> dict:
    """About n marks at round step numbers between first and last (both ends included)."""
    if last <= first:
        return {str(first): short_step(first)}
    raw = (last - first) / max(1, n - 1)
    mag = 10 ** math.floor(math.log10(raw))
    nice = min((m * mag for m in (1, 2, 2.5, 5, 10)), key=lambda v: abs(v - raw))
    nice = max(1, int(nice))
    ticks = list(range(int(math.ceil(first / nice) * nice), last + 1, nice))
    marks = {t: short_step(t) for t in ticks if t - first > 0.4 * nice and last - t > 0.4 * nice}
    marks.update({first: short_step(first), last: short_step(last)})
    return {str(k): v for k, v in sorted(marks.items())}


def slider_props(p: Probe, value: int | None, old_max: int | None) -> tuple:
    """(min, max, step, marks, value, disabled) of a step slider; follows the newest step when
    the user left it at the right end (or never touched it)."""
    if not p.ok:
        return 0, 0, 1, {}, None, True
    first, last = p.first, p.last
    follow = value is None or old_max is None or value >= old_max
    new_value = last if follow else min(max(int(value), first), last)
    return first, last, (p.interval or 1), slider_marks(first, last), new_value, first == last


SLIDER_PROPS = ("min", "max", "step", "marks", "value", "disabled")


def step_label(shown: int | None, last: int | None) -> str:
    if shown is None:
        return ""
    suffix = " (newest)" if shown == last else f" (newest: {last:,})" if last is not None else ""
    return f"step {shown:,}{suffix}"


def history_note(stride: int, n_steps: int, hint: str = "") -> str:
    """Says how much of the history a chart shows."""
    if n_steps == 0:
        return ""
    if stride <= 1:
        return f"All {n_steps:,} logged steps."
    return (f"Every {stride}th of {n_steps:,} logged steps (thinned for speed; the newest step "
            f"is always included).{' ' + hint if hint else ''}")
