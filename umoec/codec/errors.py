"""Errors of the codec: every refusal is one of these, with a message a user can act on.

They derive from `umoec.errors.UserError`, so `run_main` prints them as one line (no traceback) and
exits with their `exit_code`: 2 for a bad input file or unsupported setting, 1 for a runtime
failure of the predictor.
"""
from __future__ import annotations

from ..errors import EXIT_FAILURE, EXIT_USAGE, UserError


class CodecError(UserError):
    """Base class of every codec failure."""

    def __init__(self, message: str, exit_code: int = EXIT_USAGE):
        super().__init__(message, exit_code)


class FormatError(CodecError):
    """The .umc bytes are not a valid container: magic, version, truncation, CRC, sizes, payload."""


class FingerprintMismatch(CodecError):
    """The file was written with a different predictor (weights, config or numerics)."""


class DecodeMismatch(CodecError):
    """Decoding went wrong although the file's checksums are intact: not damage but a bug (the
    decoder's probabilities differ from the encoder's). Exit code 1."""

    def __init__(self, message: str):
        super().__init__(message, EXIT_FAILURE)


class IntegrityError(CodecError):
    """Decoding finished but the result is not the original (sha256 or size differ)."""


class CoderUnavailable(CodecError):
    """The requested entropy coder or setting cannot be used; the message says why and what works."""


class ProbabilityError(CodecError):
    """The predictor produced logits that cannot be turned into a distribution (NaN, +inf, shape)."""

    def __init__(self, message: str):
        super().__init__(message, EXIT_FAILURE)
