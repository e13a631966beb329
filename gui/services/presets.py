"""Named presets beyond the tiers, and config import/export for the editor. No Dash here.

User presets are commented config YAML files, `<presets-dir>/<name>.yaml` (`--presets-dir`,
default `<runs-dir>/../presets`); names are sanitised (never hidden, never a path) and may not
shadow a tier. A preset's `tier` is its own name, so the dropdown shows it selected and runs
started from it record where their config came from. Import reads YAML or JSON (at most 1 MB)
into form values unvalidated (the form marks bad fields); export needs a valid form.
"""
from __future__ import annotations

import base64
import binascii
import json
import os
import time
from pathlib import Path
from typing import Any

import yaml

from umoec import config as C

from .. import form
from .launcher import sanitise_name as sanitise

MAX_IMPORT_BYTES = 1 << 20


class PresetError(ValueError):
    """A preset or an import/export cannot be done; the message says why."""


def default_dir(runs_dir: Path) -> Path:
    return Path(runs_dir).resolve().parent / "presets"


def active_dir() -> Path | None:
    """The serving cockpit's presets folder (inside a request), else None (no user presets)."""
    from ..context import current
    ctx = current()
    return ctx.settings.presets_dir if ctx is not None else None


def tier_options(tier: str | None) -> list[dict]:
    """The tier dropdown: tiers, saved presets, and `tier` when it is neither (a loaded file)."""
    presets, saved = C.preset_names(), names()
    options = [{"label": p, "value": p} for p in presets]
    options += [{"label": f"{s} (saved preset)", "value": s} for s in saved]
    if tier and tier not in presets and tier not in saved:
        options.append({"label": f"{tier} (loaded)", "value": tier})
    return options


def names(folder: Path | None = None) -> list[str]:
    """User presets, sorted; tiers excluded (a file shadowing a tier is ignored)."""
    folder = folder if folder is not None else active_dir()
    if folder is None:
        return []
    tiers = set(C.preset_names())
    try:
        found = [p.stem for p in folder.glob("*.yaml") if p.is_file()]
    except OSError:
        return []
    return sorted(n for n in found if n not in tiers and sanitise(n) == n)


def user_preset_path(name: str | None, folder: Path | None = None) -> Path | None:
    """The file of user preset `name`, or None if there is no such preset."""
    folder = folder if folder is not None else active_dir()
    if folder is None or not name or sanitise(name) != name or name in C.preset_names():
        return None
    path = folder / f"{name}.yaml"
    return path if path.is_file() else None


def is_user_preset(name: str | None, folder: Path | None = None) -> bool:
    return user_preset_path(name, folder) is not None


def save(values: dict[str, Any], name: str | None, folder: Path | None) -> tuple[str, bool]:
    """Save the form as user preset `name`; returns (name, True if it replaced one)."""
    if folder is None:
        raise PresetError("this cockpit has no presets folder")
    if not (clean := sanitise(name)):
        raise PresetError("type a preset name (letters, digits, '.', '_' or '-')")
    if clean in C.preset_names():
        raise PresetError(f"{clean!r} is a tier; choose another name")
    result = form.check(values, clean)
    if not result.ok:
        raise PresetError(f"not saved: {result.problem}")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{clean}.yaml"
        existed = path.exists()
        C.save(result.config, path, header=f"User preset {clean}, saved from the u-moec-tiny cockpit "
               f"on {time.strftime('%Y-%m-%d %H:%M:%S')}.")
    except OSError as exc:
        raise PresetError(f"not saved: {exc.strerror or exc}") from None
    return clean, existed


def delete(name: str | None, folder: Path | None) -> str:
    if (path := user_preset_path(name, folder)) is None:
        raise PresetError(f"{name!r} is not a saved preset (tiers cannot be deleted)")
    try:
        os.unlink(path)
    except OSError as exc:
        raise PresetError(f"not deleted: {exc.strerror or exc}") from None
    return str(name)


# -- import / export ---------------------------------------------------------------------------
def decode_upload(contents: str | None, filename: str | None) -> str:
    """The text of a dcc.Upload `contents` (data URL, base64)."""
    if not contents or "," not in contents:
        raise PresetError("nothing uploaded")
    try:
        raw = base64.b64decode(contents.split(",", 1)[1], validate=False)
    except (binascii.Error, ValueError):
        raise PresetError(f"{filename}: the upload is damaged") from None
    if len(raw) > MAX_IMPORT_BYTES:
        raise PresetError(f"{filename} is {len(raw):,} bytes, larger than any config "
                          f"({MAX_IMPORT_BYTES:,} max)")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise PresetError(f"{filename} is not UTF-8 text (a YAML or JSON config?)") from None


def import_text(text: str, filename: str = "upload") -> form.Loaded:
    """Form values from YAML or JSON text (JSON by the .json suffix or a leading '{')."""
    if filename.lower().endswith(".json") or text.lstrip().startswith("{"):
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise PresetError(f"{filename} is not valid JSON: {exc}") from None
        if not isinstance(data, dict):
            raise PresetError(f"{filename} is not a config: expected an object of sections")
        text = yaml.safe_dump(data, sort_keys=False)
    try:
        return form.values_from_text(text, filename)
    except form.FormFileError as exc:
        raise PresetError(str(exc)) from None


def export_text(values: dict[str, Any], tier: Any, fmt: str) -> tuple[str, str]:
    """(file name, text) of the form as 'yaml' (commented) or 'json'; only a valid form."""
    result = form.check(values, tier)
    if not result.ok:
        raise PresetError(f"not exported: {result.problem}")
    base = sanitise(str(result.config.tier)) or "config"
    if fmt == "json":
        return f"{base}.json", json.dumps(C.to_dict(result.config), indent=2) + "\n"
    return f"{base}.yaml", C.dumps(result.config, header="Exported from the u-moec-tiny cockpit.")
