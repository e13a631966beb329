"""compress / decompress: drive a predictor over B streams, quantise, entropy-code, containerise.

Per block (layout.py): step the predictor once per step with every stream's previous byte, turn
the logits of the active streams into frequencies (probs.py, the one path), then code the block
with a fresh coder (coders.py) and write a record (container.py). The predictor's state runs on
across blocks. With sharpening the encoder quantises each step for every alpha of SHARPEN_GRID,
measures the block's exact code length under each, and keeps the cheapest (ties: alpha = 1);
the decoder reads alpha from the block record. Online adaptation (predictor.adapt) is called
after the same steps on both sides: whenever the total of coded bytes reaches a multiple of
adapt_every.
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np

from .. import units
from ..engine import ENGINE_VERSION
from ..predict.protocol import BOS, foresee, parts, start
from . import cm, coders
from .container import (
    MAX_BLOCK_SIZE,
    MAX_STREAMS,
    MIN_BLOCK_SIZE,
    Header,
    fingerprint_digest,
    pack_block,
    pack_header,
    parse_blocks,
    parse_header,
)
from .errors import CodecError, DecodeMismatch, FingerprintMismatch, FormatError, IntegrityError
from .filters import x86_forward, x86_inverse
from .probs import (
    ALPHA_ONE,
    SHARPEN_GRID,
    cum_freqs,
    distances_to_freqs,
    ideal_bits,
    logit_distances,
    symbol_intervals,
)

Progress = Callable[[int, int], None]   # (bytes done, bytes total)
PROGRESS_EVERY = 16                     # steps between progress calls inside a block
DECODE_CHUNK = 4096                     # steps per piece of decoder output


def config_hash(config: Any) -> bytes:
    """sha256 of a config (umoec Config or plain dict) as canonical JSON."""
    if not isinstance(config, dict):
        from ..config import to_dict
        config = to_dict(config)
    return hashlib.sha256(json.dumps(config, sort_keys=True, separators=(",", ":"),
                                     default=str).encode()).digest()


@dataclass(frozen=True)
class CodecSettings:
    streams: int = 1                   # B parallel streams (contiguous segments)
    coder: str = "rans"                # entropy.coder
    precision: int = 32                # entropy.precision (coder state bits)
    prob_precision: int = 16           # entropy.prob_precision
    block_size: int = 65536            # entropy.block_size
    sharpening: bool = False           # entropy.probability_sharpening
    adapt_every: int = 0               # bytes between adaptation rounds (0 = off)
    engine: int = ENGINE_VERSION       # coding-engine version the predictor runs
    profile: str = ""
    model_hash: bytes = bytes(32)      # the coding model's identity (zeros: no model)
    model_name: str = ""
    metadata: dict = field(default_factory=dict)
    x86: bool = False                  # code the bytes through the x86 filter (filters.py)

    @classmethod
    def from_config(cls, config, *, streams: int, profile: str = "", adapt_every: int = 0,
                    model_hash: bytes = bytes(32), model_name: str = "",
                    metadata: dict | None = None) -> CodecSettings:
        """Settings from a umoec Config's entropy.* section."""
        e = config.entropy
        return cls(streams=streams, coder=e.coder, precision=e.precision, prob_precision=e.prob_precision,
                   block_size=e.block_size, sharpening=e.probability_sharpening,
                   adapt_every=adapt_every, profile=profile, model_hash=bytes(model_hash),
                   model_name=model_name, metadata=dict(metadata or {}))

    def check(self) -> None:
        coders.check(self.coder, self.precision, self.prob_precision)
        if self.coder == "cm" and self.sharpening:
            raise CodecError("the cm coder mixes the network's probabilities itself: "
                             "entropy.probability_sharpening must be off")
        if not 1 <= self.streams <= MAX_STREAMS:
            raise CodecError(f"streams must be in 1..{MAX_STREAMS}, got {self.streams}")
        if not MIN_BLOCK_SIZE <= self.block_size <= MAX_BLOCK_SIZE:
            raise CodecError(f"entropy.block_size must be in {MIN_BLOCK_SIZE}..{MAX_BLOCK_SIZE}, "
                             f"got {self.block_size}")


@dataclass(frozen=True)
class CodecStats:
    """Sizes and time of one compression or decompression (the CLIs' summary line)."""
    raw_bytes: int
    packed_bytes: int
    seconds: float

    @property
    def bpb(self) -> float:
        """Bits of .umc per byte of original (the whole file, header included)."""
        return units.bpb(self.packed_bytes, self.raw_bytes)

    @property
    def ratio(self) -> float:
        return self.raw_bytes / self.packed_bytes if self.packed_bytes else 0.0

    @property
    def bytes_per_s(self) -> float:
        return self.raw_bytes / self.seconds if self.seconds > 0 else 0.0

    def summary(self) -> str:
        return (f"raw {self.raw_bytes:,} B, compressed {self.packed_bytes:,} B, {self.bpb:.3f} bpb, "
                f"ratio {self.ratio:.2f}, {self.seconds:.2f} s, {self.bytes_per_s:,.0f} B/s")


class _AdaptClock:
    """Calls predictor.adapt after the same steps in encoder and decoder, with the same bytes."""

    def __init__(self, predictor, every: int, total: int):
        self.adapt = getattr(predictor, "adapt", None) if every > 0 else None
        self.total = total          # no round after the last byte: nothing is left to code
        self.every, self.coded, self.next_at = every, 0, every
        self.columns: list[np.ndarray] = []
        self.active: list[int] = []

    def after_step(self, column: np.ndarray, k: int, state):
        if self.adapt is None:
            return state
        self.columns.append(column.copy())
        self.active.append(k)
        self.coded += k
        if self.coded < self.next_at or self.coded >= self.total:
            return state
        steps = np.stack(self.columns)                                      # (S, B)
        valid = np.arange(len(column))[None, :] < np.array(self.active)[:, None]
        recent = [steps[valid[:, i], i].tobytes() for i in range(len(column))]
        self.columns, self.active = [], []
        self.next_at = (self.coded // self.every + 1) * self.every
        return self.adapt(recent, state)


def _tick(progress: Progress | None, done: int, total: int) -> None:
    if progress is not None:
        progress(done, total)


def compress(data: bytes, predictor, settings: CodecSettings = CodecSettings(), *,
             progress: Progress | None = None) -> bytes:
    """Compress `data` into .umc bytes. `progress(done, total)` is called during the work."""
    settings.check()
    data = bytes(data)
    header = Header(settings.coder, settings.precision, settings.prob_precision, settings.sharpening,
                    settings.engine, settings.streams, settings.block_size, settings.adapt_every,
                    len(data), hashlib.sha256(data).digest(), bytes(settings.model_hash),
                    fingerprint_digest(_fingerprint(predictor, settings.coder, _cm_version(predictor))),
                    settings.model_name,
                    settings.profile, dict(settings.metadata), settings.x86)
    out = [pack_header(header)]
    lay = header.layout
    if lay.n_blocks == 0:
        _tick(progress, 0, 0)
        return out[0]
    matrix = lay.to_matrix(x86_forward(data) if settings.x86 else data)   # (B, T) uint8
    if settings.coder == "cm":
        return b"".join(out + _cm_encode(matrix, lay, predictor, settings, progress, len(data)))
    grid = SHARPEN_GRID if settings.sharpening else (ALPHA_ONE,)
    n, B = settings.prob_precision, settings.streams
    state = predictor.init_state(B)
    clock = _AdaptClock(predictor, settings.adapt_every, len(data))
    prev = np.full(B, BOS, dtype=np.int64)
    done = 0
    for index in range(lay.n_blocks):
        t0, t1 = lay.block_steps(index)
        counts = lay.counts(t0, t1)
        starts = np.zeros((len(grid), t1 - t0, B), dtype=np.int64)
        freqs = np.ones((len(grid), t1 - t0, B), dtype=np.int64)
        for s, t in enumerate(range(t0, t1)):
            logits, state = predictor.step(prev, state)
            k = int(counts[s])
            dq = logit_distances(logits[:k])
            column = matrix[:, t]
            for g, alpha_q in enumerate(grid):
                starts[g, s, :k], freqs[g, s, :k] = symbol_intervals(distances_to_freqs(dq, n, alpha_q),
                                                                      column[:k])
            prev = column.astype(np.int64)
            state = clock.after_step(column, k, state)
            done += k
            if s % PROGRESS_EVERY == PROGRESS_EVERY - 1:
                _tick(progress, done, len(data))
        best = 0
        if len(grid) > 1:
            valid = np.arange(B)[None, :] < counts[:, None]
            cost = [ideal_bits(freqs[g][valid], n) for g in range(len(grid))]
            best = min(range(len(grid)), key=lambda g: (cost[g], grid[g] != ALPHA_ONE))
        payload = coders.encode_block(settings.coder, starts[best], freqs[best], counts,
                                      settings.precision, n)
        out.append(pack_block(grid[best], payload))
        _tick(progress, done, len(data))
    return b"".join(out)


def _fingerprint(predictor, coder: str, version: int) -> bytes:
    """The predictor's fingerprint; with the mixing stage, that stage's description (and so its
    version) too."""
    fp = predictor.fingerprint()
    return fp + b"|" + cm.describe(version).encode() if coder == "cm" else fp


def _primer(predictor) -> bytes:
    """The text the mixing stage learns first (the model's primer, or b"")."""
    return bytes(getattr(predictor, "primer", b"") or b"")


def _network(predictor) -> bool:
    """Whether the mixing stage gets a network's distribution (not the cm profile's NoNetwork)."""
    return not isinstance(predictor, cm.NoNetwork)


def _cm_version(predictor) -> int:
    """The mixing stage's version a new file gets: primed when the model has a primer; the cm
    profile's version for binary data, or for records, when its predictor asks for it."""
    return cm.written(_network(predictor), bool(_primer(predictor)),
                      bool(getattr(predictor, "binary", False)), _record(predictor))


def _record(predictor) -> int:
    """The record length the cm profile's predictor asks for (version 16), or 0."""
    return int(getattr(predictor, "record", 0) or 0)


def _cm_state(predictor, streams: int, steps: int, version: int) -> cm.CMState:
    """A fresh stage for `streams` streams, primed (a primed version) with the model's primer."""
    network = _network(predictor)
    text = _primer(predictor) if cm.is_primed(version) else b""
    if cm.is_primed(version) and not text:
        raise FingerprintMismatch(f"this .umc file was written with a primed model (mixing stage "
                                  f"v{version}), and the given model has no primer")
    # learned before the file's own stage exists: one large table at a time while it learns
    taught = cm.taught(text, version) if text else None
    st = cm.CMState(streams, network, steps, version, len(text),
                    _record(predictor) if version == cm.RECORD else 0)
    if taught is not None:
        cm.prime(st, taught, text)
    return st


def _cum(logits: np.ndarray, n: int, out: np.ndarray, lo: int = 0) -> None:
    """Cumulative frequencies (k, 257) of the network's distribution of streams lo..lo+k-1 into
    out[0, lo:lo + k]."""
    cum_freqs(logits, n, out[0, lo:lo + len(logits)])


def _cm_step(predictor, prev, state, counts: np.ndarray, n: int, cum: np.ndarray, code):
    """One step (counts: its one count) of the network through the mixing stage: each slice of
    streams the predictor hands over (predict/protocol.py's `parts`: with a split, in stream
    order as each process's results come) gets its cumulative frequencies and is coded at once
    by code(counts, cum, (lo, hi)), the block coder's `steps` for those lanes, which returns
    the step's row of bytes when decoding (the emit hands its slice back to the predictor, for
    the streams' next step) and None when encoding. -> the predictor's new state."""
    k, lanes = int(counts[0]), cum.shape[1]

    def emit(lo: int, hi: int, logits: np.ndarray) -> np.ndarray | None:
        top = min(hi, k)                         # lanes past k have ended: nothing to code
        if lo >= top:
            return None
        _cum(logits[:top - lo], n, cum, lo)
        row = code(counts, cum, (lo, top if top < k else lanes))  # the one that reaches k ends the step
        return None if row is None else row[lo:hi]
    return parts(predictor, prev, state, emit)


def _decode_into(row: np.ndarray, dec: cm.BlockDecoder, counts, cum, lanes: tuple[int, int]) -> np.ndarray:
    row[lanes[0]:lanes[1]] = dec.steps(counts, cum, lanes)[0, lanes[0]:lanes[1]]
    return row


def _cm_encode(matrix, lay, predictor, settings, progress, total) -> list[bytes]:
    """Blocks of the mixing stage: the network (unless NoNetwork) steps as for rANS, and each
    step's bytes go through cm.BlockEncoder with its cumulative frequencies."""
    B, n = settings.streams, settings.prob_precision
    network = _network(predictor)
    st = _cm_state(predictor, B, lay.steps, _cm_version(predictor))
    state = start(predictor, B, foreseen=True) if network else None
    clock = _AdaptClock(predictor, settings.adapt_every, total)
    prev = np.full(B, BOS, dtype=np.int64)
    out, done = [], 0
    for index in range(lay.n_blocks):
        t0, t1 = lay.block_steps(index)
        counts = lay.counts(t0, t1)
        enc = cm.BlockEncoder(st, t1 - t0)  # every stream's lane, even in a block after some ended
        if not network:  # the whole block in one call
            enc.steps(matrix[:, t0:t1].T, counts)
            done += int(counts.sum())
        else:
            cum = np.zeros((1, B, 257), dtype=np.int64)
            for s, t in enumerate(range(t0, t1)):
                k = int(counts[s])
                column = matrix[:, t]
                after = column.astype(np.int64)   # the next step's prev
                if t + 1 < lay.steps:
                    foresee(predictor, after, state)
                state = _cm_step(predictor, prev, state, counts[s:s + 1], n, cum,
                                 partial(enc.steps, column[None]))
                prev = after
                state = clock.after_step(column, k, state)
                done += k
                if s % PROGRESS_EVERY == PROGRESS_EVERY - 1:
                    _tick(progress, done, total)
        out.append(pack_block(ALPHA_ONE, enc.finish()))
        _tick(progress, done, total)
    return out


def _cm_decode(header: Header, blocks, predictor, progress, version: int) -> bytes:
    lay, total = header.layout, header.original_size
    B, n = header.streams, header.prob_precision
    network = _network(predictor)
    st = _cm_state(predictor, B, lay.steps, version)
    state = predictor.init_state(B) if network else None
    clock = _AdaptClock(predictor, header.adapt_every, total)
    prev = np.full(B, BOS, dtype=np.int64)
    pieces, done = [], 0
    for index, block in enumerate(blocks):
        t0, t1 = lay.block_steps(index)
        counts = lay.counts(t0, t1)
        piece = np.zeros((t1 - t0, B), dtype=np.uint8)
        try:
            dec = cm.BlockDecoder(st, block.payload, t1 - t0)   # every stream's lane
            if not network:
                piece[:] = dec.steps(counts)
                done += int(counts.sum())
            else:
                cum = np.zeros((1, B, 257), dtype=np.int64)
                for s in range(t1 - t0):
                    k = int(counts[s])
                    state = _cm_step(predictor, prev, state, counts[s:s + 1], n, cum,
                                     partial(_decode_into, piece[s], dec))
                    column = piece[s]
                    prev = column.astype(np.int64)
                    state = clock.after_step(column, k, state)
                    done += k
                    if s % PROGRESS_EVERY == PROGRESS_EVERY - 1:
                        _tick(progress, done, total)
            dec.finish()
        except FormatError as exc:  # every block passed its CRC32: the bytes are as written
            raise _not_damage(header, f"block {index} of {len(blocks)}: {exc}") from None
        pieces.append(piece)
        _tick(progress, done, total)
    return _joined(header, pieces)


def read_header(blob: bytes) -> Header:
    """Parse and check only the header (for CLIs that need threads, streams, profile first)."""
    return parse_header(blob)[0]


def _model_label(header: Header) -> str:
    return f"model {header.model_name or '?'} ({header.model_hash.hex()[:12]}), engine v{header.engine}"


def _check_predictor(header: Header, predictor) -> int:
    """Check the file's fingerprint against the predictor; returns the mixing stage's version
    it names (each version this build has is tried; 0 for the other coders)."""
    if header.engine > ENGINE_VERSION:
        raise FingerprintMismatch(f"this .umc file needs coding engine v{header.engine}; this build "
                                  f"has v{ENGINE_VERSION}: upgrade u-moec-tiny to decode it")
    versions = cm.VERSIONS[::-1] if header.coder == "cm" else (0,)
    got = None                                   # the newest's: what this build writes now
    for version in versions:
        digest = fingerprint_digest(_fingerprint(predictor, header.coder, version))
        if digest[:len(header.fingerprint)] == header.fingerprint:   # format 3 holds 16 bytes
            return version
        got = got or digest
    newer = (f", or by a newer build of u-moec-tiny (this one reads mixing stage versions "
             f"{cm.VERSIONS[0]}-{cm.VERSIONS[-1]})" if header.coder == "cm" else "")
    raise FingerprintMismatch(
        f"this .umc file was written with {_model_label(header)} and settings whose fingerprint "
        f"is {header.fingerprint.hex()[:16]}; the given predictor has {got.hex()[:16]}: decode it "
        f"with the model it names{newer}")


def _not_damage(header: Header, what: str) -> DecodeMismatch:
    return DecodeMismatch(
        f"decoding failed ({what}) although every checksum of the file is intact: the decoder's "
        f"probabilities differ from the encoder's ({_model_label(header)}). The file is not "
        "damaged; this is a bug of u-moec-tiny, please report it with the file")


def decompress(blob: bytes, predictor, *, progress: Progress | None = None) -> bytes:
    """Decode .umc bytes with `predictor`; refuse (CodecError subclasses) anything not exact."""
    blob = bytes(blob)
    header, offset = parse_header(blob)
    version = _check_predictor(header, predictor)
    blocks = parse_blocks(blob, offset, header)
    lay = header.layout
    total = header.original_size
    if not blocks:
        return _verified(b"", header)
    if header.coder == "cm":
        return _cm_decode(header, blocks, predictor, progress, version)
    B, n = header.streams, header.prob_precision
    state = predictor.init_state(B)
    clock = _AdaptClock(predictor, header.adapt_every, total)
    prev = np.full(B, BOS, dtype=np.int64)
    chunks, done = [], 0                  # decoded (steps, B) pieces, allocated as decoding goes
    for index, block in enumerate(blocks):
        t0, t1 = lay.block_steps(index)
        counts = lay.counts(t0, t1)
        try:
            dec = coders.block_decoder(header.coder, block.payload, int(counts[0]), header.precision, n)
            for s in range(t1 - t0):
                if s % DECODE_CHUNK == 0:
                    chunks.append(np.zeros((min(DECODE_CHUNK, t1 - t0 - s), B), dtype=np.uint8))
                logits, state = predictor.step(prev, state)
                k = int(counts[s])
                column = chunks[-1][s % DECODE_CHUNK]
                column[:k] = dec.decode(distances_to_freqs(logit_distances(logits[:k]), n, block.alpha_q))
                prev = column.astype(np.int64)
                state = clock.after_step(column, k, state)
                done += k
                if s % PROGRESS_EVERY == PROGRESS_EVERY - 1:
                    _tick(progress, done, total)
            dec.finish()
        except FormatError as exc:  # every block passed its CRC32: the bytes are as written
            raise _not_damage(header, f"block {index} of {len(blocks)}: {exc}") from None
        _tick(progress, done, total)
    return _joined(header, chunks)


def _joined(header: Header, pieces: list[np.ndarray]) -> bytes:
    """The decoded (steps, B) pieces back into the original's byte order, checked against its
    size and sha256 (every block passed its CRC: a mismatch is a decoding bug, not damage)."""
    data = header.layout.from_matrix(np.concatenate(pieces).T)
    if header.x86:
        data = x86_inverse(data)
    if len(data) != header.original_size or hashlib.sha256(data).digest() != header.sha256:
        raise _not_damage(header, "the decoded bytes do not match the original's sha256")
    return data


def _verified(data: bytes, header: Header) -> bytes:
    if len(data) != header.original_size or hashlib.sha256(data).digest() != header.sha256:
        raise IntegrityError("decoded data does not match the sha256 of the original recorded in the "
                             ".umc file: the file is corrupted")
    return data
