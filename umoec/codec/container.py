"""The .umc container: an explicit little-endian header, then one record per block.

Byte layout (docs/codec.md has the same table):

    off  size  field
      0     8  magic b"\\x89UMC\\r\\n\\x1a\\n"
      8     2  u16 format version (2; version 1 was the float engine's, not portable)
     10     4  u32 header length in bytes, from offset 0 to the end of the header CRC
     14     1  u8  coder: 0 = rans, 1 = tans, 2 = cm (the context-mixing stage, cm.py)
     15     1  u8  precision (coder state bits: 32 or 64)
     16     1  u8  prob_precision (log2 of the frequency total)
     17     1  u8  flags: bit 0 = probability sharpening; other bits must be 0
     18     2  u16 coding-engine version (umoec.engine.ENGINE_VERSION)
     20     4  u32 streams B
     24     4  u32 block_size
     28     8  u64 adapt_every (bytes between online-adaptation rounds; 0 = off)
     36     8  u64 original size in bytes
     44    32  sha256 of the original
     76    32  model hash: the coding model's content hash (its identity; zeros if none)
    108    32  predictor fingerprint: sha256 of predictor.fingerprint()
    140   1+t  u8 length t (<= 64), model name, ASCII (for messages)
     ..   1+p  u8 length p (<= 64), profile name, ASCII
     ..   4+m  u32 length m (<= 65536), metadata: a JSON object, UTF-8
     ..     4  u32 CRC32 of every header byte before it
    then ceil(T / steps_per_block) block records (see layout.py), each:
      0     4  u32 payload length
      4     1  u8  alpha_q: sharpening exponent alpha = alpha_q / 16 (16 when sharpening is off)
      5     4  u32 CRC32 of bytes 0..4 of the record followed by the payload
      9     .  payload (coder bit stream, see rans.py / tans.py / cm.py)
    and nothing after the last block.

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
FORMAT_VERSION = 2
CODER_IDS = {"rans": 0, "tans": 1, "cm": 2}
CODER_NAMES = {v: k for k, v in CODER_IDS.items()}
FLAG_SHARPENING = 1

_PREFIX = struct.Struct("<8sHI")                     # magic, version, header length
_FIXED = struct.Struct("<8sHIBBBBHIIQQ32s32s32s")     # everything up to the strings: 140 bytes
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
MAX_HEADER = _FIXED.size + 2 * (1 + MAX_STR) + 4 + MAX_METADATA + 4
MIN_HEADER = _FIXED.size + 1 + 1 + 4 + 4


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
    for name in ("sha256", "model_hash", "fingerprint"):
        if len(getattr(h, name)) != 32:
            bad(f"{name} must be 32 bytes")
    if not isinstance(h.metadata, dict):
        bad("metadata must be a JSON object")


def pack_header(h: Header) -> bytes:
    validate(h)
    try:
        meta = json.dumps(h.metadata, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    except (TypeError, ValueError) as exc:
        raise FormatError(f"metadata must be plain JSON (str, numbers, lists, dicts): {exc}") from None
    if len(meta) > MAX_METADATA:
        raise FormatError(f"metadata is {len(meta)} bytes as JSON; at most {MAX_METADATA} fit in a "
                          ".umc header")
    name, profile = _ascii(h.model_name, "model name"), _ascii(h.profile, "profile name")
    length = _FIXED.size + 1 + len(name) + 1 + len(profile) + 4 + len(meta) + 4
    body = _FIXED.pack(MAGIC, FORMAT_VERSION, length, CODER_IDS[h.coder], h.precision, h.prob_precision,
                       FLAG_SHARPENING if h.sharpening else 0, h.engine, h.streams, h.block_size,
                       h.adapt_every, h.original_size, h.sha256, h.model_hash, h.fingerprint)
    body += bytes([len(name)]) + name + bytes([len(profile)]) + profile
    body += struct.pack("<I", len(meta)) + meta
    return body + struct.pack("<I", zlib.crc32(body))


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
                          "decode; this build reads format 2")
    if version != FORMAT_VERSION:
        raise FormatError(f"unsupported .umc format version {version} (this build reads version "
                          f"{FORMAT_VERSION}; a newer u-moec-tiny wrote it)")
    if not MIN_HEADER <= length <= MAX_HEADER:
        raise FormatError(f".umc header declares an impossible length of {length} bytes")
    if length > len(buf):
        raise FormatError(f"truncated .umc file: the header needs {length} bytes, the file has "
                          f"{len(buf)}")
    (crc,) = struct.unpack_from("<I", buf, length - 4)
    if zlib.crc32(buf[:length - 4]) != crc:
        raise FormatError(".umc header is corrupted (CRC32 mismatch)")
    (_, _, _, coder_id, precision, prob_precision, flags, engine, streams, block_size, adapt_every,
     size, sha, model_hash, fp) = _FIXED.unpack_from(buf)
    pos = _FIXED.size
    strings = []
    for what in ("model name", "profile name"):
        n = buf[pos]
        if n > MAX_STR or pos + 1 + n > length - 4:
            raise FormatError(f".umc header: {what} length {n} does not fit the header")
        try:
            strings.append(bytes(buf[pos + 1:pos + 1 + n]).decode("ascii"))
        except UnicodeDecodeError:
            raise FormatError(f".umc header: {what} is not ASCII") from None
        pos += 1 + n
    (mlen,) = struct.unpack_from("<I", buf, pos) if pos + 4 <= length - 4 else (None,)
    if mlen is None or mlen > MAX_METADATA or pos + 4 + mlen != length - 4:
        raise FormatError(".umc header: metadata length does not match the header length")
    try:
        metadata = json.loads(bytes(buf[pos + 4:pos + 4 + mlen]).decode("utf-8"))
    except (ValueError, RecursionError):
        raise FormatError(".umc header: metadata is not valid UTF-8 JSON") from None
    if coder_id not in CODER_NAMES:
        raise FormatError(f".umc header: unknown coder id {coder_id}")
    if flags & ~FLAG_SHARPENING:
        raise FormatError(f".umc header: unknown flags 0x{flags:02x}")
    header = Header(CODER_NAMES[coder_id], precision, prob_precision, bool(flags & FLAG_SHARPENING),
                    engine, streams, block_size, adapt_every, size, bytes(sha), bytes(model_hash),
                    bytes(fp), strings[0], strings[1], metadata)
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
