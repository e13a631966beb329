"""Frame-by-frame coding: the output never depends on the number of workers, the source is read
one frame ahead at most (memory is bounded by the frame size, not the input), progress runs to
the input size, and a frame that fails in a worker raises its own error here."""
import io

import pytest

from tests.conftest import ROOT
from umoec.codec.errors import FormatError
from umoec.compress.api import compress_bytes, decompress_bytes
from umoec.compress.stream import compress_stream, decompress_stream

TEXT = b"".join((ROOT / "umoec" / "codec" / n).read_bytes() for n in ("cm.py", "codec.py"))


class Counting(io.RawIOBase):
    """A source of `size` bytes that records the most it was ever asked for and how much had
    been read when each output write happened."""

    def __init__(self, data: bytes):
        self.src, self.biggest, self.pos = io.BytesIO(data), 0, 0

    def readable(self):
        return True

    def read(self, n=-1):
        self.biggest = max(self.biggest, n)
        out = self.src.read(n)
        self.pos += len(out)
        return out


class Sink(io.BytesIO):
    def __init__(self, src):
        super().__init__()
        self.seen = []
        self.source = src

    def write(self, b):
        self.seen.append(self.source.pos)
        return super().write(b)


def test_workers_never_change_the_bytes_and_frames_are_written_as_they_come():
    data = (TEXT * 2)[:60_000]
    one = compress_bytes(data, None, profile="cm", frame_bytes=8192)
    assert compress_bytes(data, None, profile="cm", frame_bytes=8192, workers=2) == one
    assert decompress_bytes(one, workers=2) == data == decompress_bytes(one)
    src = Counting(data)
    dst = Sink(src)
    st = compress_stream(src, dst, None, profile="cm", frame_bytes=8192, total=len(data))
    assert dst.getvalue() == one and st.read == len(data) and st.frames == 8
    assert src.biggest <= 8192                       # never more than a frame at a time
    assert dst.seen[0] <= 2 * 8192                   # the first frame left before the input ended


def test_a_network_profile_in_frames_with_two_workers(tiny_model):
    model = tiny_model
    data = TEXT[:6000]
    one = compress_bytes(data, model, profile="turbo", frame_bytes=2048)
    assert compress_bytes(data, model, profile="turbo", frame_bytes=2048, workers=2) == one
    out = io.BytesIO()
    st = decompress_stream(io.BytesIO(one), out, model, workers=2)
    assert out.getvalue() == data and st.frames == 3 and st.header.model_hash.hex() == model.hash


def test_progress_reaches_the_input_size():
    seen = []
    compress_bytes(TEXT[:20_000], None, profile="cm", frame_bytes=4096,
                   progress=lambda done, total: seen.append((done, total)))
    assert seen[-1] == (20_000, 20_000) and all(d <= t for d, t in seen)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)


def test_a_damaged_frame_fails_in_a_worker_with_its_own_error():
    import multiprocessing
    import time
    others = set(multiprocessing.active_children())   # e.g. another test's Dask workers
    blob = bytearray(compress_bytes(TEXT[:20_000], None, profile="cm", frame_bytes=4096))
    blob[-20] ^= 0xFF                                 # the last frame's payload: its CRC fails
    with pytest.raises(FormatError, match="CRC32"):
        decompress_bytes(bytes(blob), workers=2)

    def ours():
        return set(multiprocessing.active_children()) - others
    deadline = time.monotonic() + 10
    while ours() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert ours() == set()                            # the workers do not outlive the error


def test_a_frame_size_below_one_byte_is_refused():
    from umoec.codec.errors import CodecError
    with pytest.raises(CodecError, match="frame size"):
        compress_bytes(b"abc", None, profile="cm", frame_bytes=0)


def test_fast_codes_a_size_whose_last_block_begins_after_some_streams_ended(tiny_model):
    """`umc --profile fast` refused files whose size is 64 x (a multiple of a block's steps)
    + 1..63 bytes (65,540 bytes with 64 KiB blocks): the last block's first step has fewer
    streams than the file. Such a size now codes and decodes."""
    from umoec.compress import profiles
    block = tiny_model.build_config().entropy.block_size
    B = profiles.get("fast").streams
    spb = -(-block // B)                               # a block's steps
    q = spb * -(-(B * 1024) // (B * spb))              # >= 1 KiB a stream: all 64 streams
    data = (TEXT * (B * q // len(TEXT) + 1))[:B * q + 5]
    blob = compress_bytes(data, tiny_model, profile="fast")
    assert decompress_bytes(blob, tiny_model) == data
