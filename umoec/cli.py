"""Shared command-line plumbing: one-line errors, meaningful exit codes, `--set` overrides.

Exit codes (umoec/errors.py, re-exported here): 0 success, 1 runtime failure, 2 bad
usage/config/input, 130 interrupted. Tracebacks only with --debug or UMOEC_DEBUG=1 (CONTRACTS.md).
"""
from __future__ import annotations

import argparse
import os
import sys
import traceback
from collections.abc import Callable, Sequence

from .config import ConfigError
from .errors import EXIT_FAILURE, EXIT_INTERRUPTED, EXIT_USAGE, UserError

__all__ = ["EXIT_FAILURE", "EXIT_INTERRUPTED", "EXIT_USAGE", "UserError", "add_common", "run_main"]


def add_common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--set", dest="overrides", action="append", default=[],
                        metavar="KEY=VALUE", help="override a config field, e.g. moe.top_k=2 "
                        "(repeatable)")
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")


def run_main(main: Callable[[Sequence[str] | None], int], prog: str,
             argv: Sequence[str] | None = None) -> int:
    """Call `main(argv)` and turn every exception into a one-line message and an exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv or os.environ.get("UMOEC_DEBUG") == "1"
    try:
        return int(main(argv) or 0)
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except (ConfigError, UserError) as exc:
        if debug:
            traceback.print_exc()
        print(f"{prog}: {exc}", file=sys.stderr)
        return getattr(exc, "exit_code", EXIT_USAGE)
    except Exception as exc:  # the last line of defence: never a bare traceback
        if debug:
            traceback.print_exc()
        print(f"{prog}: error: {type(exc).__name__}: {exc} (run with --debug for details)",
              file=sys.stderr)
        return EXIT_FAILURE
