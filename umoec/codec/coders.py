"""The entropy coders behind one small interface: check, encode a block, decode a block.

`rans` (rans.py) works for every prob_precision up to precision/2. `tans` (tans.py) is a real
table-ANS coder limited to prob_precision 10..12; anything else raises CoderUnavailable with the
reason, which the CLI and the cockpit show as is. `cm` (cm.py) is the context-mixing stage with
its binary arithmetic coder; codec.py drives it itself (its decisions interleave with the
network's steps bit by bit), these functions only bound its payloads.
"""
from __future__ import annotations

import numpy as np

from . import cm, rans, tans
from .errors import CoderUnavailable

CODERS = ("rans", "tans", "cm")
RANS_SCALAR_BELOW = 16   # fewer active lanes: the Python-integer rANS encoder is faster (same bits)


def check(coder: str, precision: int, prob_precision: int) -> None:
    """Raise CoderUnavailable unless this coder can run with these settings."""
    if coder not in CODERS:
        raise CoderUnavailable(f"unknown entropy.coder {coder!r}; choose one of {', '.join(CODERS)}")
    rans.check_params(precision, prob_precision)
    if coder == "tans":
        tans.check_params(prob_precision)


def max_payload_bytes(coder: str, symbols: int, lanes: int, precision: int, prob_precision: int) -> int:
    if coder == "cm":
        return cm.max_payload_bytes(symbols, lanes)
    if coder == "tans":
        return tans.max_payload_bytes(symbols, lanes, prob_precision)
    return rans.max_payload_bytes(symbols, lanes, precision, prob_precision)


def min_payload_bytes(coder: str, lanes: int, precision: int, prob_precision: int) -> int:
    """Every block payload holds at least the final coder state of each of its lanes."""
    if coder == "cm":
        return cm.min_payload_bytes(lanes)
    if coder == "tans":
        return (lanes * prob_precision + 7) // 8
    return lanes * precision // 8


def encode_block(coder: str, starts: np.ndarray, freqs: np.ndarray, counts: np.ndarray, precision: int,
                 prob_precision: int) -> bytes:
    """starts, freqs: (T, B) integer arrays of each coded byte's interval; counts: (T,) active lanes."""
    if coder == "tans":
        return tans.encode(starts, freqs, counts, prob_precision)
    if len(counts) and counts[0] < RANS_SCALAR_BELOW:
        return rans.encode_ref(starts.tolist(), freqs.tolist(), counts.tolist(), precision, prob_precision)
    return rans.encode(starts, freqs, counts, precision, prob_precision)


def block_decoder(coder: str, payload: bytes, lanes: int, precision: int, prob_precision: int):
    """An object with decode(freqs (k, 256)) -> (k,) uint8 and finish()."""
    if coder == "tans":
        return tans.Decoder(payload, lanes, prob_precision)
    return rans.Decoder(payload, lanes, precision, prob_precision)
