"""Frames: a file of several complete containers is read frame by frame, in order, to the one
marked last; a one-frame file is a plain container; cuts, swaps, splices and trailing bytes are
refused with a message that says which."""
import io

import pytest

from tests.umoec.codec.helpers import TEXT
from umoec.codec import read_header
from umoec.codec.container import parse_header
from umoec.codec.errors import FormatError
from umoec.codec.frames import frame_of, frames, read_frame
from umoec.compress.api import compress_bytes

MAGIC = b"\x89UMC"


def split(blob: bytes) -> list[bytes]:
    src, out = io.BytesIO(blob), []
    while (f := read_frame(src)) is not None:
        out.append(f)
    return out


def read_all(blob: bytes) -> list[int]:
    return [h.original_size for h, _ in frames(io.BytesIO(blob))]


def test_one_frame_is_a_plain_container_and_several_are_numbered():
    one = compress_bytes(TEXT, None, profile="cm")
    assert frame_of(read_header(one)) is None and split(one) == [one]
    many = compress_bytes(TEXT, None, profile="cm", frame_bytes=1000)
    parts = split(many)
    assert b"".join(parts) == many and len(parts) == -(-len(TEXT) // 1000)
    assert [frame_of(read_header(p)) for p in parts] == (
        [(i, False) for i in range(len(parts) - 1)] + [(len(parts) - 1, True)])
    assert sum(read_all(many)) == len(TEXT)


@pytest.mark.parametrize("edit, message", [
    (lambda p: p[:-1], "truncated .umc file: it ends after frame"),
    (lambda p: [p[1], p[0]] + p[2:], "frame 0 expected, the file holds frame 1"),
    (lambda p: p + [p[-1]], "unexpected bytes after the last frame"),
    (lambda p: p[:1] + p[2:], "frame 1 expected, the file holds frame 2"),
    (lambda p: [], "it is empty"),
])
def test_cuts_swaps_and_extras_are_refused(edit, message):
    parts = split(compress_bytes(TEXT[:4000], None, profile="cm", frame_bytes=1000))
    with pytest.raises(FormatError, match=message):
        read_all(b"".join(edit(parts)))


def test_a_single_frame_cannot_be_followed_or_joined():
    one = compress_bytes(TEXT[:500], None, profile="cm")
    with pytest.raises(FormatError, match="unexpected bytes after the last frame"):
        read_all(one + one)
    with pytest.raises(FormatError, match="unexpected bytes after the last frame"):
        read_all(one + b"\0")
    parts = split(compress_bytes(TEXT[:3000], None, profile="cm", frame_bytes=1000))
    with pytest.raises(FormatError, match="frame 1 has no frame number"):
        read_all(parts[0] + one)


def test_a_frame_cut_inside_says_so():
    blob = compress_bytes(TEXT[:3000], None, profile="cm", frame_bytes=1000)
    second = blob.index(MAGIC, 1)
    _, offset = parse_header(blob[second:])     # the second frame's header ends here
    with pytest.raises(FormatError, match=r"truncated .umc file: block 0 needs"):
        read_all(blob[:second + offset + 20])
