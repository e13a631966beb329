"""Frames: a .umc file is one or more complete containers ("frames") one after another.

A file no larger than its profile's frame size is one container, exactly as before. A larger
input is cut into frames of that size, each coded on its own (its own header, sha256, blocks and
fresh model state), so compress and decompress hold one frame at a time (inputs larger than
memory, stdin to stdout) and frames can be coded by several processes; the bytes written never
depend on how many. Each frame of a file with several records `"frame": [index, last]` in its
header metadata; the decoder requires indices 0, 1, 2, ... and ends after the frame marked last,
so a file cut at a frame boundary, frames reordered or spliced from elsewhere are refused.
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import BinaryIO

from . import coders
from .container import _PREFIX, _RECORD, MAX_HEADER, RECORD_SIZE, Header, parse_header
from .errors import FormatError

FRAME_KEY = "frame"


def frame_meta(index: int, last: bool) -> dict:
    """The metadata entry of frame `index` of a file with several frames."""
    return {FRAME_KEY: [int(index), 1 if last else 0]}


def read_exactly(src: BinaryIO, n: int) -> bytes:
    """`n` bytes from `src`, fewer only at its end (a pipe may return less per read)."""
    out = bytearray()
    while len(out) < n:
        chunk = src.read(n - len(out))
        if not chunk:
            break
        out += chunk
    return bytes(out)


def read_frame(src: BinaryIO) -> bytes | None:
    """The next frame's bytes from `src`, None at the end of the input. Only the header is
    trusted for sizes after its CRC passed; each block's declared length is checked against what
    such a block can need before it is read (the full checks come when the frame is decoded)."""
    prefix = read_exactly(src, _PREFIX.size)
    if not prefix:
        return None
    if len(prefix) < _PREFIX.size:
        parse_header(prefix)                     # raises: too short / not a .umc file
    _, _, length = _PREFIX.unpack(prefix)
    head = prefix + read_exactly(src, max(0, min(length, MAX_HEADER) - len(prefix)))
    header, _ = parse_header(head)               # magic, version, length, CRC, fields
    parts, lay = [head], header.layout
    for index in range(lay.n_blocks):
        record = read_exactly(src, RECORD_SIZE)
        if len(record) < RECORD_SIZE:
            raise FormatError(f"truncated .umc file: block {index} of {lay.n_blocks} is missing")
        plen = _RECORD.unpack(record)[0]
        symbols, lanes = lay.block_symbols(index)
        limit = coders.max_payload_bytes(header.coder, symbols, lanes, header.precision,
                                         header.prob_precision)
        if plen > limit:
            raise FormatError(f"corrupted .umc file: block {index} declares {plen} payload bytes; "
                              f"a block of {symbols} bytes needs at most {limit}")
        payload = read_exactly(src, plen)
        if len(payload) < plen:
            raise FormatError(f"truncated .umc file: block {index} needs {plen} payload bytes, "
                              f"{len(payload)} are left")
        parts += [record, payload]
    return b"".join(parts)


def frame_of(header: Header) -> tuple[int, bool] | None:
    """(index, last) of a frame of a multi-frame file; None for a single-frame file."""
    value = header.metadata.get(FRAME_KEY) if isinstance(header.metadata, dict) else None
    if value is None:
        return None
    if (not isinstance(value, list) or len(value) != 2 or not all(type(v) is int for v in value)
            or value[0] < 0 or value[1] not in (0, 1)):
        raise FormatError(f".umc header: bad frame entry {value!r}")
    return value[0], bool(value[1])


class Sequence:
    """Checks that frames come as one file wrote them: a single unmarked frame, or frames
    0, 1, ... up to the one marked last, and nothing after."""

    def __init__(self):
        self.count, self.done = 0, False

    def check(self, header: Header) -> None:
        mark = frame_of(header)
        if mark is None:
            if self.count:
                raise FormatError(f"corrupted .umc file: frame {self.count} has no frame number")
            self.done = True
        else:
            index, last = mark
            if index != self.count:
                raise FormatError(f"corrupted .umc file: frame {self.count} expected, the file "
                                  f"holds frame {index} there")
            self.done = last
        self.count += 1

    def finish(self) -> None:
        if self.count == 0:
            raise FormatError("not a .umc file: it is empty")
        if not self.done:
            raise FormatError(f"truncated .umc file: it ends after frame {self.count - 1}, which "
                              "is not the last")


def frames(src: BinaryIO) -> Iterator[tuple[Header, bytes]]:
    """Every frame of `src` with its header, checked for order and completeness."""
    seq = Sequence()
    while True:
        if seq.done:
            if src.read(1):
                raise FormatError("corrupted .umc file: unexpected bytes after the last frame")
            return
        blob = read_frame(src)
        if blob is None:
            seq.finish()
            return
        header, _ = parse_header(blob)
        seq.check(header)
        yield header, blob
