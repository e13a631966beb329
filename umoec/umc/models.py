"""`umc model ...`: the model store (umoec/engine/store.py) from the command line.

    list                        every model on the search path, in lookup order; * = the default
    info NAME|HASH|PATH         what a model file says about itself, with its content hash checked
    import FILE.umm [--name N]  copy a model into the user's store
    remove NAME|HASH            delete a model from the user's store (never a shipped or run model)
    export RUN_OR_CKPT [...]    a training checkpoint (a run folder: its latest) -> coding model
    prime MODEL FILE... [...]   a copy of a model with text of its domain as its primer
Store lookups fail with LookupError or ModelFileError; they become one-line errors, exit 2.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path

from ..engine import modelfile as mf
from ..engine import store
from ..errors import EXIT_FAILURE, UserError
from ..units import FILE_UNITS, fmt_bytes


def _default_hash() -> str:
    try:
        return store.resolve(None).hash
    except (LookupError, mf.ModelFileError):
        return ""


def _flat(d: dict, prefix: str = "") -> Iterable[tuple[str, str]]:
    """Nested info as dotted keys ("source.step"), lists joined by commas."""
    for k in sorted(d):
        v, key = d[k], f"{prefix}{k}"
        if isinstance(v, dict):
            yield from _flat(v, key + ".")
        elif isinstance(v, list):
            yield key, ", ".join(str(x) for x in v)
        else:
            yield key, f"{v:,}" if isinstance(v, int) and not isinstance(v, bool) else str(v)


def cmd_list(a) -> int:
    errors: list = []
    found = store.entries(errors=errors)
    for e in errors:
        print(f"umc: warning: {e}", file=sys.stderr)
    default = _default_hash()
    if a.json:
        print(json.dumps([{"name": e.name, "hash": e.hash, "bytes": e.bytes, "where": e.where,
                           "path": str(e.path), "default": e.hash == default}
                          for e in found], indent=1))
        return 0
    rows = [("", "name", "hash", "size", "where", "path")] + [
        ("*" if e.hash == default else "", e.name, e.short, fmt_bytes(e.bytes, ".1f", FILE_UNITS),
         e.where, str(e.path))
        for e in found]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        print("  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)).rstrip())
    if not found:
        print("(no models found on the search path: "
              + ", ".join(str(p) for _, p in store.search_path()) + ")")
    else:
        print("* the default model (used when no --model is given)")
    return 0


def cmd_info(a) -> int:
    e = store.resolve(a.model)
    try:
        mf.read(e.path)
        check = "content hash verified"
    except mf.ModelFileError as exc:
        check = f"DAMAGED: {exc}"
    engine = mf.describe(e.path)["engine"]
    fields = [("name", e.name + ("  (the default model)" if e.hash == _default_hash() else "")),
              ("hash", e.hash), ("engine", f"v{engine}"), ("path", str(e.path)), ("where", e.where),
              ("size", f"{e.bytes:,} bytes"), ("check", check)] + list(_flat(e.info))
    if a.json:
        print(json.dumps({"name": e.name, "hash": e.hash, "engine": engine, "path": str(e.path),
                          "where": e.where,
                          "bytes": e.bytes, "check": check, "info": e.info}, indent=1))
    else:
        width = max(len(k) for k, _ in fields)
        for k, v in fields:
            print(f"{k:<{width}}  {v}")
    return 0 if not check.startswith("DAMAGED") else EXIT_FAILURE


def cmd_import(a) -> int:
    e = store.import_file(Path(a.file), name=a.name)
    print(f"imported {e.name} ({e.short}) to {e.path}")
    return 0


def cmd_remove(a) -> int:
    for path in store.remove(a.model):
        print(f"removed {path}")
    return 0


def _checkpoint(source: Path) -> Path:
    if source.is_dir():
        from ..run import RunDir
        latest = RunDir(source).latest_checkpoint()
        if latest is None:
            raise UserError(f"{source}: no checkpoints/step*.pt in this folder (not a run folder?)")
        return latest.path
    if not source.is_file():
        raise UserError(f"{source} does not exist (give a run folder or a checkpoint .pt file)")
    return source


def cmd_export(a) -> int:
    if a.name:
        mf.check_name(a.name)  # before the slow part
    if a.output and Path(a.output).exists() and not a.force:
        raise UserError(f"{a.output} already exists; not overwritten (use -f to overwrite)",
                        EXIT_FAILURE)
    ckpt = _checkpoint(Path(a.source))
    from ..engine.export import export_checkpoint  # imports torch
    m = export_checkpoint(ckpt, name=a.name, description=a.description)
    print(f"exported {ckpt} as {m.label()} to {_save(m, a.output)}")
    return 0


def _save(m: mf.ModelFile, output) -> Path:
    """Write `m` to `output`, or into the user store without one; returns where."""
    if output:
        return mf.write(m, Path(output))
    with tempfile.TemporaryDirectory() as tmp:
        return store.import_file(mf.write(m, Path(tmp) / f"{m.name}{mf.SUFFIX}")).path


def _primer_text(files: list[str], limit: int) -> tuple[bytes, int]:
    """Whole files in the order given, the last one cut at `limit` bytes; -> (text, files used)."""
    text, used = bytearray(), 0
    for name in files:
        if len(text) >= limit:
            break
        path = Path(name)
        if path.is_dir():
            raise UserError(f"{path} is a folder; give the files themselves")
        text += path.read_bytes()[:limit - len(text)]
        used += 1
    return bytes(text), used


def cmd_prime(a) -> int:
    from ..engine import primer
    if a.output and Path(a.output).exists() and not a.force:
        raise UserError(f"{a.output} already exists; not overwritten (use -f to overwrite)",
                        EXIT_FAILURE)
    if not 0 < a.max_bytes <= primer.MAX_BYTES:
        raise UserError(f"--max-bytes must be 1 to {primer.MAX_BYTES:,}")
    base = store.load(store.resolve(a.model))
    text, used = _primer_text(a.files, a.max_bytes)
    if not text:
        raise UserError("the given files are empty: a primer needs text")
    m = primer.attach(base, text)
    m.name = mf.check_name(a.name or f"{base.name}-primed"[:64])
    print(f"primed {base.label()} with {len(text):,} bytes of {used} file(s) as {m.label()} "
          f"to {_save(m, a.output)}")
    return 0


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="umc model", description="Manage coding models: the "
                                "search path is the shipped models, the user store "
                                f"({store.user_dir()}), $UMOEC_MODEL_PATH, then the runs folder.")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def add(name, func, help):
        s = sub.add_parser(name, help=help, description=help)
        s.add_argument("--debug", action="store_true", help="show tracebacks on errors")
        s.set_defaults(func=func)
        return s
    s = add("list", cmd_list, "list every model on the search path (* marks the default)")
    s.add_argument("--json", action="store_true", help="print JSON")
    s = add("info", cmd_info, "show a model's metadata and check its content hash")
    s.add_argument("model", metavar="NAME|HASH|PATH")
    s.add_argument("--json", action="store_true", help="print JSON")
    s = add("import", cmd_import, "copy a .umm model file into the user store")
    s.add_argument("file", metavar="FILE.umm")
    s.add_argument("--name", help="store it under this name (the hash stays the same)")
    s = add("remove", cmd_remove, "delete a model from the user store")
    s.add_argument("model", metavar="NAME|HASH")
    s = add("export", cmd_export, "turn a training checkpoint into a coding model (.umm); a run "
            "folder means its latest checkpoint; stored in the user store unless -o")
    s.add_argument("source", metavar="RUN_OR_CKPT")
    s.add_argument("-o", "--output", metavar="OUT.umm", help="write here instead of the user store")
    s.add_argument("-f", "--force", action="store_true", help="overwrite -o's file")
    s.add_argument("--name", help="model name (default: <run>-step<N>)")
    s.add_argument("--description", default="", help="free text kept in the model's info")
    s = add("prime", cmd_prime, "copy a model with text of its domain as its primer: the mixing "
            "stage learns that text before each file (smaller files of that kind; each file "
            "costs a pass over the primer, about 7 s per 2 MB, once per process)")
    s.add_argument("model", metavar="NAME|HASH|PATH")
    s.add_argument("files", metavar="FILE", nargs="+", help="the primer's text, in this order")
    s.add_argument("-o", "--output", metavar="OUT.umm", help="write here instead of the user store")
    s.add_argument("-f", "--force", action="store_true", help="overwrite -o's file")
    s.add_argument("--name", help="model name (default: <model>-primed)")
    s.add_argument("--max-bytes", type=int, default=2_000_000,
                   help="at most this much text (default 2,000,000; 8 MiB at most)")
    return p


def main(argv) -> int:
    a = parser().parse_args(argv)
    try:
        return a.func(a)
    except (LookupError, mf.ModelFileError) as exc:
        raise UserError(str(exc)) from None
    except OSError as exc:
        raise UserError(f"{exc.filename or ''}: {exc.strerror or exc}".lstrip(": "),
                        EXIT_FAILURE) from None
