"""The auto profile: per file, the network's fast profile or the mixing stage alone (cm), whichever
codes this file's kind of bytes smaller.

The default model knows text and code; on binaries, tables of numbers and logs the mixing stage
alone codes as small or smaller (docs/models.md) and 25-30x faster, with no model needed to
decode. So auto codes a sample both ways before the file:
- an input of one frame no larger than WHOLE is coded whole both ways and the smaller kept (a tie
  goes to cm), so the choice costs only the cm run (a small fraction of the network's time);
- otherwise PROBE bytes of the first frame, PIECES pieces from the middles of its quarters, are
  coded both ways and the file goes to cm when the network's sample is not at least MARGIN
  smaller. Pieces from the whole frame, because a file's parts differ (a message catalogue's
  binary index and its strings; an executable's header, code and tables): one piece from the
  middle took fast for .mo files that cm codes 5% smaller. A sample favours the network:
  it starts cold, and the stage's tables learn with length (the network's size relative to
  cm's rose from the sample to the whole file on 15 of 17 files of 76-256 KB, by up to 26%; it
  fell by 1.4% and 2.5% on the other two), hence the margin.
An input of several frames is decided frame by frame, each on a sample of its own (an archive
of text and binaries gets fast for its text and cm for the rest; stream.py, api.compress_frame),
and every frame then names the model. Each frame's header records the profile it was coded
with, so decoding is unchanged. Measured: docs/compress.md#auto.

The x86 filter (codec/filters.py) is decided before the profile, for every profile, auto or
not: a frame with enough near E8/E9 opcodes to look like x86 code is filtered when the mixing
stage alone (no model: cheap; the network gains as much, docs/compress.md#the-x86-filter) codes
its PROBE bytes densest in such opcodes (its code, not its tables) smaller filtered. Text and
most other data never pass the first test. The cm profile unprimed (auto's cm frames too) then
takes the stage's version 15, its contexts for binary data, when they code the frame's sample
at least 1 - BINARY_GAIN smaller (they cost 25-34% of its speed; text never gains that much),
or version 16, version 15 with two contexts for records of a length r (the bytes r and 2r
back), when that codes the sample 1 - BINARY_GAIN smaller again: the RECORDS lengths from
SHORTEST (shorter ones repeat contexts the stage has) to LONGEST whose byte r back best
predicts the next one on the sample are tried (not on a sample without a zero byte: text,
where none helps).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..codec import filters
from . import profiles

WHOLE = 32 << 10
PROBE = 16 << 10
PIECES = 4
BINARY_GAIN = 0.99
RECORDS = 2
SHORTEST, LONGEST = 5, 256         # the record lengths tried
MARGIN = 0.95


@dataclass(frozen=True)
class Choice:
    profile: str
    why: str                      # for `umc -v`: the sizes it was decided on
    coded: bytes | None = None    # the input already coded with `profile` (WHOLE inputs)
    x86: bool = False             # code it through the x86 filter


def probe_of(data: bytes) -> bytes:
    """The sample auto codes both ways: `data` itself up to PROBE bytes, else PROBE bytes as
    PIECES pieces, each from the middle of one of PIECES equal parts of `data` (not its start:
    that is often a header unlike the rest)."""
    if len(data) <= PROBE:
        return data
    part, piece = len(data) // PIECES, PROBE // PIECES
    return b"".join(data[i * part + (part - piece) // 2:][:piece] for i in range(PIECES))


def x86_worth(data: bytes, code: Callable[[bytes, bool], bytes]) -> bool:
    """Whether to code `data` through the x86 filter. code(sample, x86) -> .umc bytes of the
    mixing stage alone."""
    if not filters.looks_like_code(data):
        return False
    sample = filters.densest(data, PROBE)
    return len(code(sample, True)) < len(code(sample, False))


def record_lengths(sample: bytes, n: int = RECORDS) -> list[int]:
    """The `n` record lengths r (SHORTEST..LONGEST) whose byte r back best predicts the next byte of
    `sample`: the smallest conditional entropies H(x[i] | x[i - r]), estimated from counts (the
    same bias for every r); none for a sample without a zero byte."""
    x = np.frombuffer(sample, dtype=np.uint8)
    if not x.size or x.min() != 0:
        return []
    cost = {}
    for r in range(SHORTEST, min(LONGEST, len(x) // 4) + 1):
        before, after = x[:-r].astype(np.int64), x[r:]
        pairs = np.bincount(before * 256 + after, minlength=1 << 16)
        pairs = pairs[pairs > 0]
        firsts = np.bincount(before, minlength=256)
        firsts = firsts[firsts > 0]
        # n * H(after | before) = sum over firsts f log f - sum over pairs p log p
        cost[r] = (firsts * np.log2(firsts)).sum() - (pairs * np.log2(pairs)).sum()
        cost[r] /= len(after)
    return sorted(cost, key=lambda r: (cost[r], r))[:n]


def stage_contexts(data: bytes, code: Callable[[bytes, bool, int], bytes]) -> tuple[bool, int]:
    """(binary, record): the contexts the mixing stage alone (unprimed) codes `data` with.
    Version 15's for binary data when they code its sample at least BINARY_GAIN smaller than
    version 10 (they cost time); version 16's, version 15's and two for records of one of
    record_lengths' lengths, when that codes it at least BINARY_GAIN smaller again (they cost
    time too). code(sample, binary, record) -> .umc bytes of the stage alone."""
    sample = probe_of(data)
    plain, binary = len(code(sample, False, 0)), len(code(sample, True, 0))
    best = (binary < BINARY_GAIN * plain, 0)
    bar = BINARY_GAIN * (binary if best[0] else plain)
    for record in record_lengths(sample):
        size = len(code(sample, False, record))
        if size < bar:
            best, bar = (False, record), size
    return best


def choose(data: bytes, model, *, whole: bool, code: Callable[[bytes, str, bool, bool], bytes],
           x86: bool = False) -> Choice:
    """The profile for an input whose first frame is `data`; `whole`: `data` is the entire input,
    coded once per profile when small enough. code(data, profile, with_progress, x86) -> .umc
    bytes; `x86`: x86_worth's answer for `data`, used by every profile tried."""
    net = profiles.AUTO_NETWORK
    filtered = ", x86 filter" if x86 else ""
    if model is None:
        return Choice("cm", "no model" + filtered, x86=x86)
    if whole and len(data) <= WHOLE:
        stage = code(data, "cm", False, x86)
        network = code(data, net, True, x86)
        pick = "cm" if len(stage) <= len(network) else net
        return Choice(pick, f"the whole input: {net} {len(network):,} B, cm {len(stage):,} B"
                      + filtered, stage if pick == "cm" else network, x86)
    sample = probe_of(data)
    stage, network = len(code(sample, "cm", False, x86)), len(code(sample, net, False, x86))
    pick = "cm" if network > MARGIN * stage else net
    return Choice(pick, f"a {len(sample) >> 10} KiB sample: {net} {network:,} B, cm {stage:,} B"
                  + filtered, x86=x86)
