"""The .umc container: an explicit little-endian header, then one record per block.

Format 3 (what this build writes; docs/codec.md has the same table). Every header starts with
the same 14 bytes in every format, so a reader finds the version and the header's length first:

    off  size  field
      0     8  magic b"\\x89UMC\\r\\n\\x1a\\n"
      8     2  u16 format version (3; 2 still decodes, below; 1 was the float engine's)
     10     4  u32 header length in bytes, from offset 0 to the end of the header CRC
     14     1  u8  coder: 0 = rans, 1 = tans, 2 = cm (the context-mixing stage, cm.py)
     15     1  u8  precision (coder state bits: 32 or 64)
     16     1  u8  prob_precision (log2 of the frequency total)
     17     1  u8  flags: bit 0 = probability sharpening, bit 1 = a model hash follows,
                   bit 2 = the x86 filter: the coded bytes are the original through
                   filters.x86_forward (decoding ends with its inverse; size and sha256 are
                   the original's); other bits must be 0
     18     2  u16 coding-engine version (umoec.engine.ENGINE_VERSION)
     20   1-10 each, LEB128: streams B, block_size, adapt_every (bytes between online-adaptation
                   rounds; 0 = off), original size in bytes
     ..    32  sha256 of the original
     ..    32  model hash: the coding model's content hash (its identity), only with flag bit 1;
                   without it the file names no model (the hash reads as zeros)
     ..    16  predictor fingerprint: the first 16 bytes of sha256(predictor.fingerprint())
     ..   1+t  u8 length t (<= 64), model name, ASCII (for messages)
     ..   1+p  u8 length p (<= 64), profile name, ASCII
     ..   m+j  LEB128 length j (<= 65536), metadata: a JSON object, UTF-8 (j = 0: {}); the keys
                   of SHORT as one letter (adapt_rate a, frame f, globals g, input_name n,
                   match_min_len m), other keys longer than one letter
     ..     4  u32 CRC32 of every header byte before it
    then ceil(T / steps_per_block) block records (see layout.py), each:
      0     4  u32 payload length
      4     1  u8  alpha_q: sharpening exponent alpha = alpha_q / 16 (16 when sharpening is off)
      5     4  u32 CRC32 of bytes 0..4 of the record followed by the payload
      9     .  payload (coder bit stream, see rans.py / tans.py / cm.py)
    and nothing after the last block.

Format 2 (written until 2026-12-07, still read) has the same prefix, fields and records, at
fixed places: 14-17 as above (flags: bit 0 only), 18 u16 engine, 20 u32 streams, 24 u32
block_size, 28 u64 adapt_every, 36 u64 original size, 44 sha256, 76 model hash (zeros if
none), 108 the whole 32-byte fingerprint digest, then the two strings as above, a u32 metadata
length and the metadata, and the CRC. Format 3 says the same in ~70-80 fewer bytes (with the
default model 204 instead of 276; the cm profile without a model 96 instead of 174 on an empty
file named `empty`): 15% of a 1 KB file's output.

The parser checks every length against the bytes actually present and against what a block of
that size can possibly need before it slices anything, so a forged size costs nothing.
"""
from __future__ import annotations

import hashlib
import json
import struct
import zlib
from dataclasses import dataclass, field
from typing import Any

from . import coders
from .errors import CodecError, FormatError
from .layout import Layout
from .probs import ALPHA_ONE

MAGIC = b"\x89UMC\r\n\x1a\n"
FORMAT_VERSION = 3
READABLE = (2, 3)
CODER_IDS = {"rans": 0, "tans": 1, "cm": 2}
CODER_NAMES = {v: k for k, v in CODER_IDS.items()}
FLAG_SHARPENING = 1
FLAG_MODEL = 2                                       # format 3: a model hash follows
FLAG_X86 = 4                                         # format 3: the x86 filter (filters.py)
NO_MODEL = bytes(32)
FP_BYTES = 16                                        # format 3 keeps this much of the digest
# format 3 spells these metadata keys with one letter (the network's global vector, the match
# model's minimum length and the adaptation rate every network file holds; the input's name;
# a frame's number)
SHORT = {"adapt_rate": "a", "frame": "f", "globals": "g", "input_name": "n", "match_min_len": "m"}

_PREFIX = struct.Struct("<8sHI")                     # magic, version, header length
_FIXED = struct.Struct("<8sHIBBBBHIIQQ32s32s32s")     # format 2, up to the strings: 140 bytes
_FIXED3 = struct.Struct("<8sHIBBBBH")                 # format 3, up to the LEB128 sizes: 20 bytes
_RECORD = struct.Struct("<IBI")                      # payload length, alpha_q, CRC32
RECORD_SIZE = _RECORD.size

MAX_STR = 64
MAX_METADATA = 65536
MAX_STREAMS = 1 << 16
MAX_ENGINE = 4096
MAX_BLOCK_SIZE = 1 << 30
MIN_BLOCK_SIZE = 256
MAX_ORIGINAL = 1 << 48
MAX_ADAPT_EVERY = 1 << 40
MAX_HEADER = _FIXED.size + 2 * (1 + MAX_STR) + 4 + MAX_METADATA + 4    # format 2's is the larger
MIN_HEADER = {2: _FIXED.size + 1 + 1 + 4 + 4, 3: _FIXED3.size + 4 + 32 + FP_BYTES + 1 + 1 + 1 + 4}


@dataclass(frozen=True)
class Header:
    coder: str
    precision: int
    prob_precision: int
    sharpening: bool
    engine: int
    streams: int
    block_size: int
    adapt_every: int
    original_size: int
    sha256: bytes
    model_hash: bytes
    fingerprint: bytes
    model_name: str = ""
    profile: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)
    x86: bool = False                  # the coded bytes went through the x86 filter

    @property
    def layout(self) -> Layout:
        return Layout(self.original_size, self.streams, self.block_size)


@dataclass(frozen=True)
class Block:
    alpha_q: int
    payload: bytes


def fingerprint_digest(fingerprint: bytes) -> bytes:
    return hashlib.sha256(bytes(fingerprint)).digest()


def _ascii(text: str, what: str) -> bytes:
    try:
        raw = text.encode("ascii")
    except UnicodeEncodeError:
        raise FormatError(f"{what} must be ASCII, got {text!r}") from None
    if len(raw) > MAX_STR:
        raise FormatError(f"{what} is {len(raw)} characters long; at most {MAX_STR} fit in a .umc header")
    return raw


def validate(h: Header) -> None:
    """Raise FormatError naming the first field of `h` outside what the format allows."""
    def bad(msg: str) -> None:
        raise FormatError(f".umc header: {msg}")

    if h.coder not in CODER_IDS:
        bad(f"unknown coder {h.coder!r} (known: {', '.join(CODER_IDS)})")
    try:
        coders.check(h.coder, h.precision, h.prob_precision)
    except CodecError as exc:
        bad(str(exc))
    if not 1 <= h.engine <= MAX_ENGINE:
        bad(f"engine version {h.engine} outside 1..{MAX_ENGINE}")
    if not 1 <= h.streams <= MAX_STREAMS:
        bad(f"streams={h.streams} outside 1..{MAX_STREAMS}")
    if not MIN_BLOCK_SIZE <= h.block_size <= MAX_BLOCK_SIZE:
        bad(f"block_size={h.block_size} outside {MIN_BLOCK_SIZE}..{MAX_BLOCK_SIZE}")
    if not 0 <= h.adapt_every <= MAX_ADAPT_EVERY:
        bad(f"adapt_every={h.adapt_every} outside 0..{MAX_ADAPT_EVERY}")
    if not 0 <= h.original_size <= MAX_ORIGINAL:
        bad(f"original size {h.original_size} outside 0..{MAX_ORIGINAL}")
    for name in ("sha256", "model_hash"):
        if len(getattr(h, name)) != 32:
            bad(f"{name} must be 32 bytes")
    if len(h.fingerprint) not in (FP_BYTES, 32):          # format 3 files hold its first 16
        bad(f"fingerprint must be {FP_BYTES} or 32 bytes")
    if not isinstance(h.metadata, dict):
        bad("metadata must be a JSON object")


def _leb128(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 127, n >> 7
        out.append(byte | (128 if n else 0))
        if not n:
            return bytes(out)


def _read_leb128(buf, pos: int, end: int, what: str) -> tuple[int, int]:
    """-> (value, position after it); at most 10 bytes, the last without its high bit, no
    redundant trailing zero byte (one value, one spelling)."""
    value = 0
    for k in range(10):
        if pos + k >= end:
            break
        byte = buf[pos + k]
        value |= (byte & 127) << (7 * k)
        if not byte & 128:
            if byte == 0 and k:
                break
            return value, pos + k + 1
    raise FormatError(f".umc header: {what} is not a valid number")


def _shorten(metadata: dict) -> dict:
    """Format 3's metadata: the keys every file has, one letter each (one-letter keys are theirs)."""
    taken = [k for k in metadata if isinstance(k, str) and len(k) == 1]
    if taken:
        raise FormatError(f"metadata key {taken[0]!r}: one-letter keys are the .umc format's own")
    return {SHORT.get(k, k): v for k, v in metadata.items()}


def _lengthen(metadata: dict) -> dict:
    long = {v: k for k, v in SHORT.items()}
    out = {long.get(k, k): v for k, v in metadata.items()}
    if any(k in SHORT for k in metadata) or any(len(k) == 1 for k in out):
        raise FormatError(".umc header: metadata spells a key in full that format 3 shortens, or "
                          "has an unknown one-letter key")
    return out


def _strings(h: Header, version: int) -> tuple[bytes, bytes, bytes]:
    """The header's model name, profile name and metadata as the file holds them."""
    try:
        meta = json.dumps(_shorten(h.metadata) if version == 3 else h.metadata, sort_keys=True,
                          separators=(",", ":"), ensure_ascii=False).encode()
    except (TypeError, ValueError) as exc:
        raise FormatError(f"metadata must be plain JSON (str, numbers, lists, dicts): {exc}") from None
    if len(meta) > MAX_METADATA:
        raise FormatError(f"metadata is {len(meta)} bytes as JSON; at most {MAX_METADATA} fit in a "
                          ".umc header")
    return _ascii(h.model_name, "model name"), _ascii(h.profile, "profile name"), meta


def pack_header(h: Header, version: int = FORMAT_VERSION) -> bytes:
    """The header of `h` in format `version` (3; 2 for tests of what older builds wrote)."""
    validate(h)
    name, profile, meta = _strings(h, version)
    flags = (FLAG_SHARPENING if h.sharpening else 0) | (FLAG_X86 if h.x86 else 0)
    if version == 2:
        if h.x86:
            raise FormatError("format 2 has no x86 filter")
        if len(h.fingerprint) != 32:
            raise FormatError("format 2 holds the whole 32-byte fingerprint")
        length = _FIXED.size + 1 + len(name) + 1 + len(profile) + 4 + len(meta) + 4
        body = _FIXED.pack(MAGIC, 2, length, CODER_IDS[h.coder], h.precision, h.prob_precision, flags,
                           h.engine, h.streams, h.block_size, h.adapt_every, h.original_size, h.sha256,
                           h.model_hash, h.fingerprint)
        tail = struct.pack("<I", len(meta)) + meta
    elif version == 3:
        named = h.model_hash != NO_MODEL
        sizes = b"".join(map(_leb128, (h.streams, h.block_size, h.adapt_every, h.original_size)))
        meta = b"" if meta == b"{}" else meta
        tail = _leb128(len(meta)) + meta
        rest = (sizes + h.sha256 + (h.model_hash if named else b"") + h.fingerprint[:FP_BYTES])
        length = _FIXED3.size + len(rest) + 1 + len(name) + 1 + len(profile) + len(tail) + 4
        body = _FIXED3.pack(MAGIC, 3, length, CODER_IDS[h.coder], h.precision, h.prob_precision,
                            flags | (FLAG_MODEL if named else 0), h.engine) + rest
    else:
        raise FormatError(f"no .umc format version {version} to write (this build writes 2 and 3)")
    body += bytes([len(name)]) + name + bytes([len(profile)]) + profile + tail
    return body + struct.pack("<I", zlib.crc32(body))


def format_of(buf: bytes) -> int:
    """The container format a header's start says (read it after parse_header accepted it)."""
    return _PREFIX.unpack_from(buf)[1]


def parse_header(buf: bytes) -> tuple[Header, int]:
    """-> (header, offset of the first block record). Raises FormatError on anything wrong."""
    buf = memoryview(buf)
    if len(buf) < _PREFIX.size:
        raise FormatError(f"not a .umc file: {len(buf)} bytes is shorter than the "
                          f"{_PREFIX.size}-byte start of a header")
    magic, version, length = _PREFIX.unpack_from(buf)
    if magic != MAGIC:
        raise FormatError(f"not a .umc file: wrong magic {bytes(magic)!r} (expected {MAGIC!r})")
    if version == 1:
        raise FormatError("this .umc file is format 1, written by the float engine of an early "
                          "build (before exact coding), which only that build on that machine can "
                          "decode; this build reads formats 2 and 3")
    if version not in READABLE:
        raise FormatError(f"unsupported .umc format version {version} (this build reads versions "
                          f"2 and 3; a newer u-moec-tiny wrote it)")
    if not MIN_HEADER[version] <= length <= MAX_HEADER:
        raise FormatError(f".umc header declares an impossible length of {length} bytes")
    if length > len(buf):
        raise FormatError(f"truncated .umc file: the header needs {length} bytes, the file has "
                          f"{len(buf)}")
    (crc,) = struct.unpack_from("<I", buf, length - 4)
    if zlib.crc32(buf[:length - 4]) != crc:
        raise FormatError(".umc header is corrupted (CRC32 mismatch)")
    end = length - 4
    if version == 2:
        (_, _, _, coder_id, precision, prob_precision, flags, engine, streams, block_size, adapt_every,
         size, sha, model_hash, fp) = _FIXED.unpack_from(buf)
        pos, known = _FIXED.size, FLAG_SHARPENING
    else:
        _, _, _, coder_id, precision, prob_precision, flags, engine = _FIXED3.unpack_from(buf)
        pos, known, sizes = _FIXED3.size, FLAG_SHARPENING | FLAG_MODEL | FLAG_X86, []
        for what in ("streams", "block size", "adapt_every", "original size"):
            value, pos = _read_leb128(buf, pos, end, what)
            sizes.append(value)
        streams, block_size, adapt_every, size = sizes
        fixed = 32 + (32 if flags & FLAG_MODEL else 0) + FP_BYTES
        if pos + fixed + 3 > end:
            raise FormatError(".umc header: its hashes do not fit the header length")
        sha, pos = buf[pos:pos + 32], pos + 32
        model_hash, pos = (buf[pos:pos + 32], pos + 32) if flags & FLAG_MODEL else (NO_MODEL, pos)
        fp, pos = buf[pos:pos + FP_BYTES], pos + FP_BYTES
        if flags & FLAG_MODEL and bytes(model_hash) == NO_MODEL:
            raise FormatError(".umc header: a model hash of zeros (a file without a model has none)")
    strings = []
    for what in ("model name", "profile name"):
        n = buf[pos]
        if n > MAX_STR or pos + 1 + n > end:
            raise FormatError(f".umc header: {what} length {n} does not fit the header")
        try:
            strings.append(bytes(buf[pos + 1:pos + 1 + n]).decode("ascii"))
        except UnicodeDecodeError:
            raise FormatError(f".umc header: {what} is not ASCII") from None
        pos += 1 + n
    if version == 2:
        (mlen,) = struct.unpack_from("<I", buf, pos) if pos + 4 <= end else (None,)
        pos += 4
    else:
        mlen, pos = _read_leb128(buf, pos, end, "metadata length")
    if mlen is None or mlen > MAX_METADATA or pos + mlen != end:
        raise FormatError(".umc header: metadata length does not match the header length")
    try:
        metadata = json.loads(bytes(buf[pos:end]).decode("utf-8")) if mlen or version == 2 else {}
    except (ValueError, RecursionError):
        raise FormatError(".umc header: metadata is not valid UTF-8 JSON") from None
    if not isinstance(metadata, dict):
        raise FormatError(".umc header: metadata must be a JSON object")
    if version == 3:
        metadata = _lengthen(metadata)
    if coder_id not in CODER_NAMES:
        raise FormatError(f".umc header: unknown coder id {coder_id}")
    if flags & ~known:
        raise FormatError(f".umc header: unknown flags 0x{flags:02x} (the header's CRC32 is "
                          "intact: a newer u-moec-tiny wrote this file)")
    header = Header(CODER_NAMES[coder_id], precision, prob_precision, bool(flags & FLAG_SHARPENING),
                    engine, streams, block_size, adapt_every, size, bytes(sha), bytes(model_hash),
                    bytes(fp), strings[0], strings[1], metadata, bool(flags & FLAG_X86))
    validate(header)
    return header, length


def pack_block(alpha_q: int, payload: bytes) -> bytes:
    head = struct.pack("<IB", len(payload), alpha_q)
    return head + struct.pack("<I", zlib.crc32(payload, zlib.crc32(head))) + payload


def parse_blocks(buf: bytes, offset: int, header: Header) -> list[Block]:
    """Check and slice every block record after the header (lengths, CRCs, alpha, no trailing bytes)."""
    buf = memoryview(buf)
    lay = header.layout
    remaining = len(buf) - offset
    if lay.n_blocks * RECORD_SIZE > remaining:
        raise FormatError(f"truncated .umc file: the header declares {header.original_size} bytes in "
                          f"{lay.n_blocks} blocks, but only {remaining} bytes follow it")
    blocks, pos = [], offset
    for index in range(lay.n_blocks):
        if pos + RECORD_SIZE > len(buf):
            raise FormatError(f"truncated .umc file: block {index} of {lay.n_blocks} is missing")
        plen, alpha_q, crc = _RECORD.unpack_from(buf, pos)
        symbols, lanes = lay.block_symbols(index)
        limit = coders.max_payload_bytes(header.coder, symbols, lanes, header.precision,
                                         header.prob_precision)
        least = coders.min_payload_bytes(header.coder, lanes, header.precision, header.prob_precision)
        if not least <= plen <= limit:
            raise FormatError(f"corrupted .umc file: block {index} declares {plen} payload bytes; a block "
                              f"of {symbols} bytes in {lanes} streams needs {least}..{limit}")
        end = pos + RECORD_SIZE + plen
        if end > len(buf):
            raise FormatError(f"truncated .umc file: block {index} needs {plen} payload bytes, "
                              f"{len(buf) - pos - RECORD_SIZE} are left")
        payload = buf[pos + RECORD_SIZE:end]
        if zlib.crc32(payload, zlib.crc32(buf[pos:pos + 5])) != crc:
            raise FormatError(f"corrupted .umc file: block {index} fails its CRC32 check")
        if alpha_q == 0 or (not header.sharpening and alpha_q != ALPHA_ONE):
            raise FormatError(f"corrupted .umc file: block {index} has an invalid sharpening "
                              f"exponent {alpha_q}/16")
        blocks.append(Block(alpha_q, bytes(payload)))
        pos = end
    if pos != len(buf):
        raise FormatError(f"corrupted .umc file: {len(buf) - pos} unexpected bytes after the last block")
    return blocks
