"""Where coding models are found: by path, hash (or a prefix of 8+ hex digits) or name.

Search path, in order (docs/models.md):
  1. the models shipped in the package (umoec/models/*.umm; default.umm is the default model,
     what no --model or --model default means)
  2. the user's store: $XDG_DATA_HOME/umoec/models (default ~/.local/share/umoec/models)
  3. every folder (or file) in $UMOEC_MODEL_PATH, separated by os.pathsep
  4. the runs folder ($UMOEC_RUNS_DIR, default ./runs): RUN/models/*.umm of every run
A name that two different models share is ambiguous: the lookup refuses it and lists their
hashes. The same model (same hash) found in several places is one model.
"""
from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from . import modelfile as mf

PACKAGE_DIR = Path(__file__).resolve().parents[1] / "models"
DEFAULT_NAME = "default"          # what --model default (or no --model) means
DEFAULT_FILE = PACKAGE_DIR / "default.umm"   # the shipped default model
HEX = re.compile(r"^[0-9a-f]{8,64}$")


class ModelNotFound(LookupError):
    """No model on the search path matches; the message names what and where was looked."""


class AmbiguousModel(LookupError):
    pass


@dataclass(frozen=True)
class Entry:
    name: str
    hash: str
    path: Path
    where: str          # "shipped", "user", "path", "runs"
    bytes: int
    info: dict

    @property
    def short(self) -> str:
        return self.hash[:12]


def user_dir(env=os.environ) -> Path:
    base = env.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "umoec" / "models"


def runs_dir(env=os.environ) -> Path:
    return Path(env.get("UMOEC_RUNS_DIR") or "runs")


def search_path(env=os.environ) -> list[tuple[str, Path]]:
    """(kind, folder or file) in lookup order."""
    out = [("shipped", PACKAGE_DIR), ("user", user_dir(env))]
    for part in (env.get("UMOEC_MODEL_PATH") or "").split(os.pathsep):
        if part.strip():
            out.append(("path", Path(part.strip()).expanduser()))
    runs = runs_dir(env)
    if runs.is_dir():
        try:
            out += [("runs", d / "models") for d in sorted(runs.iterdir()) if (d / "models").is_dir()]
        except OSError:
            pass
    return out


def _files(place: Path) -> Iterable[Path]:
    if place.is_file():
        yield place
    elif place.is_dir():
        try:
            yield from sorted(p for p in place.iterdir() if p.suffix == mf.SUFFIX and p.is_file())
        except OSError:
            return


def entries(env=os.environ, errors: list | None = None) -> list[Entry]:
    """Every readable model on the search path, in lookup order (unreadable ones go to errors)."""
    out = []
    for kind, place in search_path(env):
        for path in _files(place):
            try:
                d = mf.describe(path)
            except mf.ModelFileError as exc:
                if errors is not None:
                    errors.append(str(exc))
                continue
            out.append(Entry(d["name"], d["hash"], path, kind, d["bytes"], d["info"]))
    return out


def _places(env) -> str:
    return ", ".join(str(p) for _, p in search_path(env))


def resolve(spec: str | None, env=os.environ) -> Entry:
    """The model a user means: a .umm path, a hash (prefix of 8+ hex digits) or a name;
    None or "default" means the shipped default model."""
    spec = (spec or DEFAULT_NAME).strip()
    if spec == DEFAULT_NAME:
        if not DEFAULT_FILE.is_file():
            raise ModelNotFound(f"no default model shipped with this installation ({DEFAULT_FILE} "
                                "is missing); give --model NAME|FILE.umm")
        d = mf.describe(DEFAULT_FILE)
        return Entry(d["name"], d["hash"], DEFAULT_FILE, "shipped", d["bytes"], d["info"])
    as_path = Path(spec).expanduser()
    if spec.endswith(mf.SUFFIX) or os.sep in spec or as_path.is_file():
        if not as_path.is_file():
            raise ModelNotFound(f"model file {as_path} does not exist")
        d = mf.describe(as_path)
        return Entry(d["name"], d["hash"], as_path, "file", d["bytes"], d["info"])
    found = entries(env)
    low = spec.lower()
    by_hash = [e for e in found if HEX.match(low) and e.hash.startswith(low)]
    if by_hash:
        hashes = {e.hash for e in by_hash}
        if len(hashes) > 1:
            raise AmbiguousModel(f"hash prefix {spec} matches {len(hashes)} models: "
                                 + ", ".join(sorted(h[:16] for h in hashes)) + "; give more digits")
        return by_hash[0]
    by_name = [e for e in found if e.name == spec]
    if not by_name:
        hint = "" if found else " (no models found at all)"
        raise ModelNotFound(f"no model named or hashed {spec!r} on the search path: "
                            f"{_places(env)}{hint}; `umc model list` shows what is there")
    hashes = sorted({e.hash for e in by_name})
    if len(hashes) > 1:
        listing = "; ".join(f"{e.short} ({e.path})" for e in by_name)
        raise AmbiguousModel(f"model name {spec!r} is ambiguous, {len(hashes)} different models "
                             f"carry it: {listing}; choose one by its hash")
    return by_name[0]


def find_hash(full_hash: str, name: str = "", env=os.environ) -> Entry:
    """The model with exactly this hash (the .umc header's), or ModelNotFound naming it."""
    for e in entries(env):
        if e.hash == full_hash:
            return e
    raise ModelNotFound(f"this file needs model {name or '?'} (hash {full_hash[:16]}), which is "
                        f"not on the search path: {_places(env)}. Import it with `umc model "
                        "import FILE.umm`, or point UMOEC_MODEL_PATH or --model at it")


def load(entry: Entry, env=os.environ) -> mf.ModelFile:
    """The model of an entry; if that copy is damaged, another copy of the same hash on the
    search path (the first error is raised when none loads). A file the user named (where
    "file") is read as it is."""
    try:
        return mf.read(entry.path)
    except mf.ModelFileError as first:
        if entry.where == "file":
            raise
        for other in entries(env):
            if other.hash == entry.hash and other.path != entry.path:
                try:
                    return mf.read(other.path)
                except mf.ModelFileError:
                    continue
        raise first from None


def import_file(path: Path, env=os.environ, name: str | None = None) -> Entry:
    """Copy a model file into the user's store (checked first); returns its entry there."""
    m = mf.read(Path(path))
    dest_dir = user_dir(env)
    dest_dir.mkdir(parents=True, exist_ok=True)
    if name:
        m.name = mf.check_name(name)
        dest = dest_dir / f"{m.name}-{m.hash[:12]}{mf.SUFFIX}"
        mf.write(m, dest)
    else:
        dest = dest_dir / f"{m.name}-{m.hash[:12]}{mf.SUFFIX}"
        tmp = dest.with_suffix(dest.suffix + ".part")
        shutil.copyfile(path, tmp)
        os.replace(tmp, dest)
    d = mf.describe(dest)
    return Entry(d["name"], d["hash"], dest, "user", d["bytes"], d["info"])


def remove(spec: str, env=os.environ) -> list[Path]:
    """Delete a model from the user's store (never a shipped model or a run's export)."""
    users = [e for e in entries(env) if e.where == "user"]
    low = spec.strip().lower()
    mine = [e for e in users if e.name == spec.strip() or (HEX.match(low) and e.hash.startswith(low))]
    if len({e.hash for e in mine}) > 1:
        raise AmbiguousModel(f"{spec!r} matches {len({e.hash for e in mine})} models in the user "
                             f"store: " + ", ".join(sorted({e.short for e in mine})))
    e = mine[0] if mine else resolve(spec, env)
    if e.where != "user":
        raise ModelNotFound(f"model {e.name} ({e.short}) is at {e.path} ({e.where}), not in the "
                            f"user store {user_dir(env)}; only models there can be removed")
    gone = []
    for other in entries(env):
        if other.where == "user" and other.hash == e.hash:
            other.path.unlink()
            gone.append(other.path)
    return gone
