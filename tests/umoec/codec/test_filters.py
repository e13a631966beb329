"""The x86 filter: paq8's E8/E9 transform, a bijection on bytes of any length, the same as a
plain left-to-right reference."""
import numpy as np
import pytest

from tests.umoec.codec.helpers import TEXT, pseudo_random_bytes, x86_like
from umoec.codec import filters as F


def reference(data: bytes, sign: int) -> bytes:
    """The transform as paq8 writes it: walk left to right; an E8/E9 byte with four bytes after
    it is an opcode and those four are skipped; a displacement in [-2^24, 2^24) moves by
    +-position, wrapped into that range."""
    out, i = bytearray(data), 0
    while i + 5 <= len(out):
        if out[i] in (0xE8, 0xE9):
            a = int.from_bytes(out[i + 1:i + 5], "little", signed=True)
            if -(1 << 24) <= a < 1 << 24:
                a = ((a + sign * i + (1 << 24)) & ((1 << 25) - 1)) - (1 << 24)
                out[i + 1:i + 5] = a.to_bytes(4, "little", signed=True)
            i += 5
        else:
            i += 1
    return bytes(out)


def test_a_call_displacement_becomes_its_target():
    data = b"\x90" * 10 + b"\xe8" + (-15).to_bytes(4, "little", signed=True) + b"\xc3"
    assert F.x86_forward(data) == b"\x90" * 10 + b"\xe8" + (-5).to_bytes(4, "little", signed=True) \
        + b"\xc3"                                       # -15 + 10: absolute, from the start
    far = b"\xe9" + (1 << 24).to_bytes(4, "little")     # a far target: left alone
    assert F.x86_forward(b"\x00" + far) == b"\x00" + far
    assert F.x86_forward(b"\xe8\x00\x00\x00") == b"\xe8\x00\x00\x00"   # no room for a displacement


@pytest.mark.parametrize("seed", range(40))
def test_it_equals_the_reference_and_its_inverse_undoes_it(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 300))
    # runs of opcodes inside displacements, near and far values, wrap-around at the range's ends
    alphabet = np.array([0x00, 0xFF, 0xE8, 0xE9, 0x01, 0xFE], dtype=np.uint8)
    data = (alphabet[rng.integers(0, len(alphabet), n)] if seed % 2
            else rng.integers(0, 256, n, dtype=np.uint8)).tobytes()
    forward = F.x86_forward(data)
    assert forward == reference(data, 1)
    assert F.x86_inverse(forward) == data == reference(forward, -1)
    assert len(forward) == len(data)


def test_code_is_found_and_text_or_noise_is_not():
    code = x86_like(20_000)
    assert F.x86_inverse(F.x86_forward(code)) == code
    assert F.near_opcode_share(code) > 0.05
    assert F.near_opcode_share(TEXT) == 0.0 and F.near_opcode_share(b"") == 0.0
    assert F.near_opcode_share(pseudo_random_bytes(100_000)) < F.MIN_OPCODES / 10


def test_only_bytes_with_enough_near_opcodes_look_like_code():
    code = x86_like(20_000)
    assert F.looks_like_code(code) and F.looks_like_code(bytes(30_000) + code)
    for other in (TEXT, b"\xe8" * 100_000, "這個詞語資料".encode() * 5000, pseudo_random_bytes(50_000),
                  b"", bytes(200_000) + code[:2000]):
        assert not F.looks_like_code(other)


def test_the_densest_window_is_the_code_between_other_bytes():
    data = bytes(30_000) + x86_like(8_000) + TEXT * 10
    window = F.densest(data, 4096)
    start = data.index(window)
    assert len(window) == 4096 and 30_000 <= start <= 30_000 + 8_000 - 4096
    assert F.densest(TEXT, 4096) == TEXT[:4096] and F.densest(b"abc", 4096) == b"abc"
