"""The coding models the cockpit offers (umoec.engine.store), as dropdown options and labels.

The Compression and Evaluation tabs choose the shipped default (first, preselected), the user's
store, $UMOEC_MODEL_PATH, models exported into the runs folder (RUN/models/stepNNNNNN.umm), or "a
checkpoint of the selected run" (exported on use). The cockpit's runs folder is the store's
(`store_env`, workers too). Reads model headers only: no weights, no torch.
"""
from __future__ import annotations

import os
from pathlib import Path

from umoec.engine import modelfile as mf
from umoec.engine import store
from umoec.run import RunDir

CHECKPOINT_CHOICE = "checkpoint"    # the option "a checkpoint of the selected run"
WHERE = {"shipped": "shipped", "user": "your model store", "path": "UMOEC_MODEL_PATH", "file": "file"}


def store_env(runs_dir: Path) -> dict[str, str]:
    """os.environ with the cockpit's runs folder as the store's runs folder."""
    return {**os.environ, "UMOEC_RUNS_DIR": str(Path(runs_dir).resolve())}


def default_entry() -> tuple[store.Entry | None, str]:
    """(the shipped default model, '') or (None, why it cannot be used)."""
    try:
        return store.resolve(None), ""
    except (LookupError, mf.ModelFileError) as exc:
        return None, str(exc)


def model_entries(runs_dir: Path, errors: list | None = None) -> list[store.Entry]:
    """Every model on the search path, once per hash, the shipped default first."""
    default, why = default_entry()
    if why and errors is not None:
        errors.append(why)
    unique: dict[str, store.Entry] = {}
    for e in ([default] if default else []) + store.entries(store_env(runs_dir), errors):
        unique.setdefault(e.hash, e)
    return list(unique.values())


def entry_label(e: store.Entry, default_hash: str | None = None) -> str:
    """'general-v1 · 186335b9d17d · shipped · default' (name, short hash, where)."""
    where = f"run {e.path.parent.parent.name}" if e.where == "runs" else WHERE.get(e.where, e.where)
    label = f"{e.name} · {e.short} · {where}"
    return label + " · default" if e.hash == default_hash else label


def model_label(name: str, model_hash: str) -> str:
    """How tables name a model: 'name (hash12)', as umoec.compress.api.Result.model does."""
    return f"{name} ({model_hash[:12]})"


def checkpoint_option(run: RunDir | None) -> dict | None:
    if run is None:
        return None
    if not run.checkpoints():
        return {"label": f"a checkpoint of run {run.name} (it has none yet)",
                "value": CHECKPOINT_CHOICE, "disabled": True}
    return {"label": f"a checkpoint of run {run.name} (chosen below, exported to a model on use)",
            "value": CHECKPOINT_CHOICE}


def model_options(runs_dir: Path, run: RunDir | None,
                  with_checkpoint: bool = True) -> tuple[list[dict], str | None, list[str]]:
    """(options, the default's value, problems) of a model dropdown; values are full hashes."""
    errors: list[str] = []
    found = model_entries(runs_dir, errors)
    default, _ = default_entry()
    default_hash = default.hash if default else None
    options = [{"label": entry_label(e, default_hash), "value": e.hash} for e in found]
    if with_checkpoint and (extra := checkpoint_option(run)):
        options.append(extra)
    return options, default_hash, errors


def find_entry(runs_dir: Path, model_hash: str | None) -> store.Entry | None:
    """The entry with this full hash on the search path (None when it is gone)."""
    if not model_hash:
        return None
    return next((e for e in model_entries(runs_dir) if e.hash == model_hash), None)


def problems_note(errors: list[str]) -> str:
    """One line about model files the store could not read (damaged, not a model...)."""
    if not errors:
        return ""
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"Not listed: {errors[0]}{more}"


def exported_model(run: RunDir, step: int, ck_mtime: float) -> dict:
    """What RUN/models/stepNNNNNN.umm says about checkpoint `step`: {} when not exported, else
    {name, hash, label, stale, error}; stale when older than the checkpoint (export again)."""
    path = run.model_path(step)
    try:
        mtime = path.stat().st_mtime
    except OSError:
        return {}
    try:
        d = mf.describe(path)
    except mf.ModelFileError as exc:
        return {"error": str(exc), "stale": True, "mtime": mtime}
    return {"name": d["name"], "hash": d["hash"], "label": model_label(d["name"], d["hash"]),
            "stale": mtime < ck_mtime, "error": "", "mtime": mtime}
