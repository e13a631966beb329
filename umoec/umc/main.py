"""umc: compress files with a neural coding model, with the habits of zstd and xz (docs/umc.md).

    umc FILE...                 FILE -> FILE.umc; the source is kept (--rm: deleted once verified)
    umc -d FILE.umc...          FILE.umc -> FILE, sha256 verified
    umc -t / -l FILE.umc...     test (decode, write nothing) / list what the headers say
    umc model|train|eval|gui    subcommands, when no file of that name is in the current folder

Exit status: 0 every file done; 1 some file failed (one line `umc: FILE: reason` each, the other
files still ran); 2 the command line is wrong, or its --model/--profile cannot be used (nothing was
done); 130 interrupted. Imports no numpy: threads.prepare has to run before numpy loads, because
numpy reads its thread settings then; files.py and the codec are imported after it.
"""
from __future__ import annotations

import argparse
import importlib
import os
import sys
import traceback
from collections.abc import Sequence

from .. import installed_version
from ..cli import EXIT_FAILURE, UserError, run_main
from ..compress.profiles import AUTO, AUTO_NETWORK, PROFILES, base, most_threads, names
from ..compress.threads import prepare
from ..engine import ENGINE_VERSION
from .names import STDIO, show, target_for

SUBCOMMANDS = ("model", "train", "eval", "gui")
FORWARDED = {"train": "bin.train", "eval": "bin.evaluate", "gui": "gui.app"}
DEFAULT_PROFILE = AUTO       # fast, or cm where the mixing stage alone codes the input as small
LEVELS = {f"-{i}": name for i, name in   # -1 turbo, -2 fast, -3 balanced (the network profiles)
          enumerate((n for n, p in PROFILES.items() if p.network), 1)}
MAX_THREADS = 256

EPILOG = """\
examples:
  umc notes.txt                 notes.txt -> notes.txt.umc (notes.txt is kept)
  umc -d notes.txt.umc          notes.txt.umc -> notes.txt
  cat f | umc -c - | umc -d -c - > g
  umc -l *.umc                  sizes, ratio, bpb, model and sha256 from the headers
  umc model list                the models umc can use

exit status: 0 all done, 1 some file failed (the others still ran), 2 bad command line or
unusable --model/--profile (nothing done), 130 interrupted. docs/umc.md has the details.
"""


def _version() -> str:
    return f"umc {installed_version()} (u-moec-tiny, coding engine v{ENGINE_VERSION})"


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="umc", usage="umc [OPTIONS] [FILE...]\n       umc model|train|eval|gui ARGS...",
        description="Lossless compression with a neural coding model. Without FILE, or with "
        "FILE -, reads stdin and writes stdout.", epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("files", nargs="*", metavar="FILE", help=argparse.SUPPRESS)
    m = p.add_argument_group("mode (default: compress)")
    m.add_argument("-d", "--decompress", action="store_true", help="decompress FILE.umc -> FILE")
    m.add_argument("-t", "--test", action="store_true",
                   help="decode and verify each file, write nothing")
    m.add_argument("-l", "--list", action="store_true",
                   help="show what each .umc header says (no decoding; -v: every field)")
    o = p.add_argument_group("output")
    o.add_argument("-c", "--stdout", action="store_true", help="write to stdout, keep the source")
    o.add_argument("-o", dest="output", metavar="FILE", help="output file name (one input only)")
    o.add_argument("-f", "--force", action="store_true",
                   help="overwrite existing outputs; read/write binary data on a terminal")
    o.add_argument("-k", "--keep", dest="rm", action="store_false", default=False,
                   help="keep the source file (the default)")
    o.add_argument("--rm", dest="rm", action="store_true",
                   help="remove the source once the output is written and verified")
    c = p.add_argument_group("coding")
    for flag, name in LEVELS.items():
        c.add_argument(flag, dest="profile", action="store_const", const=name,
                       default=DEFAULT_PROFILE, help=f"same as --profile {name}")
    c.add_argument("--profile", choices=names(), default=DEFAULT_PROFILE,
                   help=f"speed/ratio trade-off for compressing (default {DEFAULT_PROFILE}: "
                   f"{AUTO_NETWORK}, or cm when the network does not code a sample of the input "
                   "clearly smaller, as on binaries and tables of numbers); decoding takes it "
                   "from the file")
    c.add_argument("--model", metavar="NAME|HASH|PATH",
                   help="coding model (default: the shipped default model; decoding: the one "
                   "the file names, found by its hash)")
    c.add_argument("-T", "--threads", type=int, metavar="N",
                   help="cores to use: processes coding frames in parallel when the input has "
                   "several (8 MiB each), else within the one frame (its streams split over N "
                   "processes, 6 streams each at least; fewer: N threads of the SSM mixer); "
                   "the output never "
                   "depends on it (default 0: chosen from the profile and the idle cores)")
    c.add_argument("--cluster", metavar="ADDRESS",
                   help="code the frames of a large input on the workers of a Dask cluster "
                   "(scheduler address, e.g. tcp://host:8786; needs u-moec-tiny[cluster] here and "
                   "on the workers); the output is the same bytes as without it")
    c.add_argument("--frame-size", metavar="SIZE", type=_size,
                   help="input bytes per frame (K, M, G suffixes; default: the profile's, 8M): "
                   "what is held in memory and the unit of parallel work; smaller frames start "
                   "cold more often")
    g = p.add_argument_group("messages")
    g.add_argument("-q", "--quiet", action="count", default=0,
                   help="no summary lines or notes, only errors")
    g.add_argument("-v", "--verbose", action="count", default=0,
                   help="say which model, profile and threads are used; -l: every header field")
    g.add_argument("-V", "--version", action="version", version=_version())
    g.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    return p


def _size(text: str) -> int:
    """'65536', '64K', '8M', '1G' -> bytes (at least 1 KiB, at most 1 GiB)."""
    units = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    t = text.strip().upper().removesuffix("IB").removesuffix("B")
    num, unit = (t[:-1], t[-1]) if t[-1:] in units else (t, "")
    try:
        n = int(num) * units[unit]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (e.g. 65536, 64K, 8M)") from None
    if not 1 << 10 <= n <= 1 << 30:
        raise argparse.ArgumentTypeError(f"must be 1K..1G, got {text!r}")
    return n


def _check_usage(a, mode: str, sources: list[str]) -> None:
    """Refuse (exit 2) a command line that cannot work, before any file is touched."""
    if sources.count(STDIO) > 1:
        raise UserError("- (stdin) can be given only once")
    if a.threads is not None and not 0 <= a.threads <= MAX_THREADS:
        raise UserError(f"-T/--threads must be in 0..{MAX_THREADS} (0: automatic), got {a.threads}")
    if a.cluster is not None and mode == "list":
        raise UserError("--cluster codes frames; -l only reads headers")
    if mode == "list" and STDIO in sources:
        raise UserError("-l reads the header of files; it does not read stdin")
    if mode in ("compress", "decompress"):
        if a.output is not None and a.stdout:
            raise UserError("-o and -c exclude each other")
        if a.output is not None and len(sources) > 1:
            raise UserError(f"-o takes one input file; {len(sources)} were given")
        if mode == "compress" and a.stdout and len(sources) > 1:
            raise UserError("-c with several inputs would write several .umc files back to back, "
                            "which -d cannot split; compress them one by one")
        to_stdout = a.stdout or (STDIO in sources and a.output is None)
        if mode == "compress" and to_stdout and not a.force and sys.stdout.isatty():
            raise UserError("refusing to write compressed data to a terminal (redirect stdout, "
                            "give -o FILE, or -f to force)")
    if STDIO in sources and not a.force and sys.stdin.isatty():
        raise UserError("no input: give FILE..., or pipe data into umc (umc -h for help)"
                        if not a.files else "refusing to read stdin from a terminal (-f to force)")


def _report(source: str, exc: BaseException, debug: bool) -> None:
    """One line per failed file; a traceback only with --debug."""
    if debug:
        traceback.print_exception(type(exc), exc, exc.__traceback__)
    if isinstance(exc, UserError):
        why = str(exc)
    elif isinstance(exc, OSError):
        why = exc.strerror or str(exc)
    else:  # a bug: still one line, the other files still run
        why = f"error: {type(exc).__name__}: {exc} (run with --debug for details)"
    print(f"umc: {show(source)}: {why}", file=sys.stderr)


def _list(sources: list[str], verbosity: int, debug: bool) -> int:
    from . import listing  # imports numpy (the codec); no coding, so no thread setup
    rows, failed = [], 0
    for source in sources:
        try:
            rows.append(listing.read_row(source))
        except Exception as exc:
            failed += 1
            _report(source, exc, debug)
    lines = [ln for r in rows for ln in listing.details(r)] if verbosity >= 2 else \
        (listing.table(rows) if rows else [])
    if lines:
        print("\n".join(lines))
    return EXIT_FAILURE if failed else 0


def _files(a) -> int:
    mode = "list" if a.list else "test" if a.test else "decompress" if a.decompress else "compress"
    sources = list(a.files) or [STDIO]
    verbosity = max(0, 1 + a.verbose - a.quiet)
    debug = a.debug or os.environ.get("UMOEC_DEBUG") == "1"
    _check_usage(a, mode, sources)
    if mode == "list":
        return _list(sources, verbosity, debug)
    # decoding: as many as any profile may use (turbo's and fast's two: their streams split over
    # processes, engine/split.py), the file's profile being unknown until its header is read
    wanted = base(a.profile).threads if mode == "compress" else most_threads()
    plan = prepare(a.threads or wanted, fixed=bool(a.threads))   # before numpy loads
    # frames: as many processes as -T says; decoding, by default 0: as many as cores are idle,
    # decided by the decoder once it sees a file of several frames
    workers = plan.threads if a.threads or mode == "compress" else 0
    from ..compress.api import open_model
    from ..engine import device
    from . import files
    device.refresh()                   # UMOEC_ENGINE_DEVICE that cannot be used: exit 2 here
    needs = mode == "compress" and base(a.profile).network   # the cm profile has no model
    model = open_model(a.model) if needs or a.model else None     # ModelError: exit 2
    cluster = _connect(a.cluster)                                  # UserError: exit 2
    try:
        opts = files.Options(model, a.profile, a.force, a.rm, verbosity, workers=workers,
                             frame_bytes=a.frame_size, cluster=cluster)
        opts.note(2, f"umc: {plan.reason}" + (f"; model {model.label()} ({model.path})"
                                              if model else ""))
        if cluster is not None:
            opts.note(2, f"umc: {cluster.describe()}")
        return _run_files(mode, sources, a, opts, model, debug)
    finally:
        if cluster is not None:
            cluster.close()


def _connect(address: str | None):
    """The Dask cluster of --cluster, connected and checked, or None."""
    if address is None:
        return None
    from ..compress.cluster import Cluster
    return Cluster(address)


def _run_files(mode: str, sources: list[str], a, opts, model, debug: bool) -> int:
    from . import files
    run = {"compress": files.compress_one, "decompress": files.decompress_one,
           "test": files.verify_one}[mode]
    failed = 0
    for source in sources:
        try:
            target = None if mode == "test" else target_for(
                source, decompress=mode == "decompress", to_stdout=a.stdout, output=a.output)
            if mode == "compress":
                opts.note(2, f"umc: {show(source)}: compressing with "
                          + (f"model {model.label()}" if model else "no model")
                          + f", profile {a.profile}")
            line = run(source, target, opts)
        except Exception as exc:  # reported; the other files still run
            failed += 1
            _report(source, exc, debug)
        else:
            opts.note(1, line)
    return EXIT_FAILURE if failed else 0


def _subcommand(name: str, args: list[str]) -> int:
    if name == "model":
        from .models import main as model_main
        return model_main(args)
    module = importlib.import_module(FORWARDED[name])   # their own flags, messages, exit codes
    return run_main(module.main, f"umc {name}", args)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in SUBCOMMANDS:
        if not os.path.lexists(argv[0]):
            return _subcommand(argv[0], argv[1:])
        if "-q" not in argv and "--quiet" not in argv:
            print(f"umc: note: {argv[0]!r} is a file here, so it is compressed; run "
                  f"`umc {argv[0]} ...` from another folder for the subcommand", file=sys.stderr)
    return _files(parser().parse_args(argv))


def entry() -> None:
    """The `umc` console script."""
    sys.exit(run_main(main, "umc"))


if __name__ == "__main__":
    entry()
