"""The .umc container: header round trip and every way a file can be wrong (fuzzed with hypothesis)."""
import struct
import tracemalloc
import zlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.umoec.codec.helpers import TEXT, CyclePredictor
from umoec.codec import CodecError, CodecSettings, FormatError, compress, decompress
from umoec.codec.container import (
    FLAG_MODEL,
    MAGIC,
    RECORD_SIZE,
    Header,
    _leb128,
    _read_leb128,
    fingerprint_digest,
    pack_block,
    pack_header,
    parse_blocks,
    parse_header,
)

DATA = TEXT[:700]
SETTINGS = CodecSettings(streams=2, block_size=256, model_name="tiny", profile="p",
                         metadata={"ckpt": "step000100.pt"})
BLOB = compress(DATA, CyclePredictor(), SETTINGS)
TANS_BLOB = compress(DATA, CyclePredictor(), CodecSettings(streams=3, block_size=256, coder="tans",
                                                           prob_precision=11, model_name="x"))
HEADER, OFFSET = parse_header(BLOB)
FULL_FP = fingerprint_digest(CyclePredictor().fingerprint())   # what format 2 holds whole
FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def decode(blob):
    return decompress(blob, CyclePredictor())


def with_header_crc(blob: bytes) -> bytes:
    """Recompute the header CRC after a deliberate edit (to reach the checks behind it)."""
    (length,) = struct.unpack_from("<I", blob, 10)
    return blob[:length - 4] + struct.pack("<I", zlib.crc32(blob[:length - 4])) + blob[length:]


def with_block_crcs(blob: bytes) -> bytes:
    """Recompute every block record's CRC after an edit inside a payload."""
    _header, pos = parse_header(blob)
    out = bytearray(blob[:pos])
    while pos + RECORD_SIZE <= len(blob):
        plen, alpha = struct.unpack_from("<IB", blob, pos)
        payload = blob[pos + RECORD_SIZE:pos + RECORD_SIZE + plen]
        out += pack_block(alpha, payload)
        pos += RECORD_SIZE + plen
    return bytes(out + blob[pos:])


def test_header_roundtrip_and_layout():
    assert BLOB[:8] == MAGIC == b"\x89UMC\r\n\x1a\n"
    assert (HEADER.coder, HEADER.streams, HEADER.original_size, HEADER.profile, HEADER.metadata) == (
        "rans", 2, len(DATA), "p", {"ckpt": "step000100.pt"})
    assert parse_header(pack_header(HEADER)) == (HEADER, OFFSET)
    assert len(parse_blocks(BLOB, OFFSET, HEADER)) == HEADER.layout.n_blocks == 3
    assert decode(BLOB) == DATA and decompress(TANS_BLOB, CyclePredictor()) == DATA


def test_wrong_magic_version_and_header_length():
    with pytest.raises(FormatError, match="wrong magic"):
        decode(b"PK\x03\x04" + BLOB[4:])
    with pytest.raises(FormatError, match="format version 4"):
        decode(BLOB[:8] + struct.pack("<H", 4) + BLOB[10:])
    with pytest.raises(FormatError, match="impossible length"):   # format 2 needs 150 bytes or more
        decode(BLOB[:8] + struct.pack("<H", 2) + BLOB[10:])
    with pytest.raises(FormatError, match="format 1, written by the float engine"):
        decode(BLOB[:8] + struct.pack("<H", 1) + BLOB[10:])
    with pytest.raises(FormatError, match="impossible length"):
        decode(BLOB[:10] + struct.pack("<I", 1 << 31) + BLOB[14:])
    with pytest.raises(FormatError, match=r"not a .umc file"):
        decode(b"")


@pytest.mark.parametrize("blob", [BLOB, TANS_BLOB], ids=["rans", "tans"])
def test_every_truncation_is_refused(blob):
    for cut in range(len(blob)):
        with pytest.raises(FormatError):
            decode_any(blob[:cut])


def decode_any(blob):
    return decompress(blob, CyclePredictor())


@pytest.mark.parametrize("blob", [BLOB, TANS_BLOB], ids=["rans", "tans"])
def test_every_single_bit_flip_is_refused(blob):
    for bit in range(8 * len(blob)):
        bad = bytearray(blob)
        bad[bit // 8] ^= 1 << (bit % 8)
        with pytest.raises(FormatError):
            decode_any(bytes(bad))


def test_trailing_bytes_are_refused():
    with pytest.raises(FormatError, match="after the last block"):
        decode(BLOB + b"\0")


def forged(**fields) -> bytes:
    h = Header(**{**HEADER.__dict__, **fields})
    return pack_header(h) + BLOB[OFFSET:]


@pytest.mark.parametrize("fields,message", [
    ({"original_size": 1 << 48}, "only .* bytes follow"),
    ({"original_size": 1 << 30, "block_size": 1 << 30}, "after the last block"),
    ({"streams": 1 << 16}, "needs"),
    ({"original_size": 10**6}, "only .* bytes follow"),
])
def test_absurd_declared_sizes_fail_fast_without_allocating(fields, message):
    blob = forged(**fields)
    tracemalloc.start()
    try:
        with pytest.raises(FormatError, match=message):
            decode(blob)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 << 20


def test_out_of_range_fields_behind_a_valid_crc_are_refused():
    raw = bytearray(BLOB)
    for off, value, message in ((14, 9, "coder id"), (15, 48, "32 or 64"), (16, 17, "prob_precision"),
                                (17, 8, "unknown flags 0x08.*newer"), (20, 0, "streams=0")):
        bad = bytearray(raw)
        bad[off] = value
        with pytest.raises(FormatError, match=message):
            decode(with_header_crc(bytes(bad)))
    bad = bytearray(raw)
    bad[20:31] = b"\x80" * 11                   # a number that never ends
    with pytest.raises(FormatError, match="streams is not a valid number"):
        decode(with_header_crc(bytes(bad)))
    v2 = bytearray(pack_header(Header(**{**HEADER.__dict__, "fingerprint": FULL_FP}), 2) + BLOB[OFFSET:])
    struct.pack_into("<I", v2, 20, 0)
    with pytest.raises(FormatError, match="streams=0"):
        decode(with_header_crc(bytes(v2)))
    for flag in (2, 4):                         # format 2 has no model flag, no x86 filter
        v2[17] = flag
        with pytest.raises(FormatError, match="flags"):
            decode(with_header_crc(bytes(v2)))


def test_the_x86_flag_is_read_back_and_only_format_3_holds_it():
    h = Header(**{**HEADER.__dict__, "x86": True})
    blob = pack_header(h)
    assert blob[17] & 4 and parse_header(blob)[0] == h
    assert not parse_header(pack_header(HEADER))[0].x86
    with pytest.raises(FormatError, match="format 2 has no x86 filter"):
        pack_header(Header(**{**h.__dict__, "fingerprint": FULL_FP}), 2)


def test_format_2_files_still_decode_and_say_the_same():
    """Files older builds wrote (format 2: fixed places, the whole fingerprint digest)."""
    for blob, header, offset in ((BLOB, HEADER, OFFSET), (TANS_BLOB, *parse_header(TANS_BLOB))):
        full = Header(**{**header.__dict__, "fingerprint": FULL_FP})
        old = pack_header(full, 2) + blob[offset:]
        assert old[8:10] == b"\x02\x00" and parse_header(old)[0] == full
        assert decode(old) == DATA
    with pytest.raises(FormatError, match="whole 32-byte fingerprint"):
        pack_header(HEADER, 2)


def test_format_3_is_smaller_and_holds_the_same_header():
    full = Header(**{**HEADER.__dict__, "fingerprint": FULL_FP})
    v2, v3 = pack_header(full, 2), pack_header(full)
    assert v3[8:10] == b"\x03\x00" and parse_header(v3)[0] == HEADER
    # no model hash (32), half the fingerprint (16), the numbers 2, 256, 0 and 700 in 6 bytes
    # instead of 24, the metadata's length in 1 instead of 4
    assert len(v2) - len(v3) == 32 + 16 + (24 - 6) + 3 == 69
    named = Header(**{**full.__dict__, "model_hash": bytes(range(32))})
    assert parse_header(pack_header(named))[0].model_hash == bytes(range(32))
    assert len(pack_header(named)) == len(v3) + 32
    empty = Header(**{**full.__dict__, "metadata": {}})
    assert parse_header(pack_header(empty))[0].metadata == {}
    assert len(pack_header(empty)) == len(v3) - len(b'{"ckpt":"step000100.pt"}')


def test_format_3_refuses_a_zero_model_hash_and_numbers_spelled_two_ways():
    named = pack_header(Header(**{**HEADER.__dict__, "model_hash": b"\x01" * 32}))
    at = named.index(b"\x01" * 32)                # after the numbers and the sha256
    assert named[17] & FLAG_MODEL and at == 20 + 6 + 32
    zeroed = named[:at] + bytes(32) + named[at + 32:-4]
    with pytest.raises(FormatError, match="model hash of zeros"):
        parse_header(zeroed + struct.pack("<I", zlib.crc32(zeroed)))
    unnamed = Header(**{**HEADER.__dict__, "model_hash": bytes(32)})
    assert pack_header(unnamed)[17] & FLAG_MODEL == 0        # zeros: no model, no hash written
    # streams = 2 spelled 0x82 0x00 (a redundant zero byte) is refused, not read as 2
    blob = pack_header(HEADER)
    respelled = blob[:20] + b"\x82\x00" + blob[21:-4]
    respelled = respelled[:10] + struct.pack("<I", len(respelled) + 4) + respelled[14:]
    with pytest.raises(FormatError, match="streams is not a valid number"):
        parse_header(respelled + struct.pack("<I", zlib.crc32(respelled)))


def test_format_3_spells_the_usual_metadata_keys_with_one_letter():
    meta = {"globals": "AAAA", "match_min_len": 5, "adapt_rate": 32, "input_name": "a.txt",
            "frame": [0, 1], "ckpt": "x"}
    h = Header(**{**HEADER.__dict__, "metadata": meta})
    raw = pack_header(h)
    assert parse_header(raw)[0].metadata == meta
    assert b'"g":"AAAA"' in raw and b"globals" not in raw and b'"ckpt":"x"' in raw
    assert len(pack_header(Header(**{**h.__dict__, "fingerprint": FULL_FP}), 2)) - len(raw) > 48 + 40
    with pytest.raises(FormatError, match=r"one-letter keys are the \.umc format's own"):
        pack_header(Header(**{**HEADER.__dict__, "metadata": {"g": 1}}))

    def with_meta(text: bytes) -> bytes:                  # a format 3 header holding `text`
        body = pack_header(Header(**{**HEADER.__dict__, "metadata": {}}))[:-5] + bytes([len(text)]) + text
        body = body[:10] + struct.pack("<I", len(body) + 4) + body[14:]
        return body + struct.pack("<I", zlib.crc32(body))
    assert parse_header(with_meta(b'{"n":"b"}'))[0].metadata == {"input_name": "b"}
    for text in (b'{"input_name":"b"}', b'{"z":1}'):           # spelled in full; unknown letter
        with pytest.raises(FormatError, match="spells a key in full"):
            parse_header(with_meta(text))


@given(st.integers(0, (1 << 64) - 1))
def test_leb128_numbers_round_trip(n):
    raw = _leb128(n)
    assert _read_leb128(raw + b"\xff", 0, len(raw), "n") == (n, len(raw))


def test_metadata_limits():
    with pytest.raises(FormatError, match="metadata"):
        compress(b"x", CyclePredictor(), CodecSettings(metadata={"x": "y" * 70000}))
    with pytest.raises(FormatError, match="profile"):
        compress(b"x", CyclePredictor(), CodecSettings(profile="p" * 65))


@FUZZ
@given(st.binary(max_size=600))
def test_random_bytes_are_refused(junk):
    with pytest.raises(FormatError):
        decode(junk)
    with pytest.raises(FormatError):
        decode(MAGIC + junk)


mutation = st.one_of(
    st.tuples(st.just("set"), st.integers(0, 10**6), st.integers(0, 255)),
    st.tuples(st.just("insert"), st.integers(0, 10**6), st.integers(0, 255)),
    st.tuples(st.just("delete"), st.integers(0, 10**6), st.integers(1, 40)),
    st.tuples(st.just("truncate"), st.integers(0, 10**6), st.just(0)),
    st.tuples(st.just("append"), st.integers(0, 255), st.integers(1, 20)),
)


def mutate(blob: bytes, ops) -> bytes:
    b = bytearray(blob)
    for op, pos, arg in ops:
        pos = pos % (len(b) + 1)
        if op == "set" and b:
            b[pos % len(b)] = arg
        elif op == "insert":
            b[pos:pos] = bytes([arg])
        elif op == "delete":
            del b[pos:pos + arg]
        elif op == "truncate":
            del b[pos:]
        elif op == "append":
            b += bytes([pos]) * arg
    return bytes(b)


def decodes_right_or_clear_error(blob, data=DATA):
    try:
        assert decompress(blob, CyclePredictor()) == data
    except CodecError:
        pass


@FUZZ
@given(st.sampled_from([BLOB, TANS_BLOB]), st.lists(mutation, min_size=1, max_size=4))
def test_mutated_files_decode_exactly_or_raise_a_codec_error(blob, ops):
    decodes_right_or_clear_error(mutate(blob, ops))


@FUZZ
@given(st.sampled_from([BLOB, TANS_BLOB]), st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)),
                                                    min_size=1, max_size=6))
def test_payload_edits_behind_valid_crcs_never_escape_as_other_errors(blob, edits):
    """Corrupt payload bytes and fix the CRCs: the coders themselves must refuse cleanly."""
    _header, offset = parse_header(blob)
    b = bytearray(blob)
    for pos, value in edits:
        b[offset + pos % (len(b) - offset)] = value
    decodes_right_or_clear_error(with_block_crcs(bytes(b)))


@FUZZ
@given(st.lists(st.tuples(st.integers(8, 160), st.integers(0, 255)), min_size=1, max_size=4))
def test_header_edits_behind_a_valid_crc_never_escape_as_other_errors(edits):
    b = bytearray(BLOB)
    for pos, value in edits:
        b[pos] = value
    decodes_right_or_clear_error(with_header_crc(bytes(b)))
