"""The error root: `UserError` and the exit codes every command shares.

A leaf module (it imports nothing from umoec), so the codec, the compressor and the CLIs can all
raise and catch `UserError` without importing each other. `umoec.cli.run_main` prints a
`UserError` as one line and exits with its `exit_code`.

Exit codes: 0 success, 1 runtime failure, 2 bad usage/config/input, 130 interrupted.
"""
from __future__ import annotations

EXIT_FAILURE, EXIT_USAGE, EXIT_INTERRUPTED = 1, 2, 130


class UserError(Exception):
    """A failure the user can fix; the message is shown as is."""

    def __init__(self, message: str, exit_code: int = EXIT_USAGE):
        super().__init__(message)
        self.exit_code = exit_code
