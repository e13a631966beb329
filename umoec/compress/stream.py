"""Frame by frame: compress or decompress from one binary stream to another holding one frame
(a few with workers) at a time, optionally coding frames in several processes.

The input is cut into frames of the profile's frame size (codec/frames.py); a file that fits in
one frame is written exactly as a single container. With `workers` > 1 the frames go to that
many processes (spawned, each with one engine thread) through a window of 2 x workers frames,
and come back in order: the output is the same bytes for any number of workers. Memory is
bounded by the window, not by the input: stdin to stdout works for inputs larger than memory.
With a `cluster` (cluster.py) the frames go to a Dask cluster's workers instead, in the same
ordered way.
"""
from __future__ import annotations

import hashlib
import multiprocessing
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from itertools import chain
from typing import BinaryIO

from ..codec.codec import read_header
from ..codec.container import Header
from ..codec.errors import CodecError, FormatError
from ..codec.frames import frame_meta, frame_of, frames, read_exactly
from . import profiles
from . import workers as W
from .choose import choose, x86_worth

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class StreamStats:
    read: int                     # bytes read from the source
    written: int                  # bytes written
    sha256: bytes                 # of the original (what compress read, what decompress wrote)
    header: Header | None = None   # decompress: the first frame's header
    frames: int = 0
    profile: str = ""             # compress: the profile written (auto's choice; frame by
    # frame: the network profile when a frame took it, else cm)
    choice: str = ""              # compress with auto: what the choice was made on
    frame_profiles: tuple = ()    # compress with auto, several frames: each frame's profile
    x86_frames: int = 0           # compress: how many frames went through the x86 filter

    @property
    def picked(self) -> str:
        """The profile written, or with auto frame by frame those the frames took ("cm+fast")."""
        return "+".join(dict.fromkeys(self.frame_profiles)) or self.profile


def _cut(src: BinaryIO, size: int) -> Iterator[tuple[int, bool, bytes]]:
    """(index, last, data) of each frame; one frame read ahead, to know which is last."""
    index, data = 0, read_exactly(src, size)
    while True:
        nxt = read_exactly(src, size) if len(data) == size else b""
        last = not nxt
        yield index, last, data
        if last:
            return
        index, data = index + 1, nxt


def _ordered(name: str, jobs: Iterator[tuple], workers: int, model, cluster=None) -> Iterator:
    """workers.<name>(*job, progress, model) for every (job, progress), in order: on the Dask
    `cluster` when given, here with one worker, else in a pool of processes (without progress)."""
    if cluster is not None:
        yield from cluster.ordered(name, jobs, model)
        return
    if workers <= 1:
        for job, progress in jobs:
            yield getattr(W, name)(*job, progress, model)
        return
    ctx = multiprocessing.get_context("spawn")      # no fork of a process with threads running
    pool = ProcessPoolExecutor(workers, mp_context=ctx, initializer=W.init, initargs=(model,))
    try:
        pending = deque()
        for job, _ in jobs:
            pending.append(pool.submit(W.pooled, name, *job))
            while len(pending) >= 2 * workers:
                yield W.unwrap(pending.popleft().result())
        while pending:
            yield W.unwrap(pending.popleft().result())
    except BaseException:
        # an error, Ctrl-C or an abandoned generator: do not wait for frames nobody will use
        procs = list((getattr(pool, "_processes", None) or {}).values())
        pool.shutdown(wait=False, cancel_futures=True)
        for proc in procs:
            proc.terminate()
        raise
    pool.shutdown(wait=True)


def compress_stream(src: BinaryIO, dst: BinaryIO, model, *, profile: str = "turbo", config=None,
                    input_name: str = "", progress: Progress | None = None, total: int = 0,
                    frame_bytes: int | None = None, workers: int = 1,
                    cluster=None) -> StreamStats:
    """Compress everything `src` holds into `dst`; `total` (the input size, 0 if unknown) only
    scales `progress`. `cluster`: a cluster.Cluster that codes the frames (of an input of
    several). profile "auto": fast or cm, for an input of one frame chosen here (coded whole
    when small), for an input of several chosen for each frame on its own (choose.py)."""
    prof = profiles.base(profile)
    size = prof.frame_bytes if frame_bytes is None else int(frame_bytes)
    if size < 1:
        raise CodecError(f"the frame size must be at least 1 byte, got {size}")
    sha, read, base = hashlib.sha256(), 0, [0]
    cut = _cut(src, size)
    head = next(cut)
    if head[1]:                 # one frame: coded here (with the engine's threads)
        workers, cluster = 1, None
    choice, chosen, contexts = None, [], (None, None)
    if profile == profiles.AUTO and head[1]:
        from .api import compress_frame, contexts_for
        x86 = x86_worth(head[2], lambda data, f: compress_frame(data, None, profile="cm", x86=f))
        contexts = contexts_for(head[2], model, profile, x86)
        choice = choose(head[2], model, whole=True, x86=x86, code=lambda data, name, shown, f:
                        compress_frame(data, model, profile=name, config=config,
                                       input_name=input_name, x86=f, binary=contexts[0],
                                       record=contexts[1],
                                       progress=_inner(progress, base, total) if shown else None))
        prof = profiles.get(choice.profile)
        if choice.coded is not None:          # the whole input, coded while choosing
            sha.update(head[2])
            written, count = _drain(iter([(len(head[2]), choice.coded)]), dst, base, progress,
                                    total)
            return StreamStats(len(head[2]), written, sha.digest(), None, count, prof.name,
                               choice.why, x86_frames=int(choice.x86))

    # what each frame is coded with: auto (each frame chooses) for an input of several
    name = profiles.AUTO if profile == profiles.AUTO and choice is None else prof.name

    def jobs():
        nonlocal read
        for index, last, data in chain([head], cut):
            sha.update(data)
            read += len(data)
            meta = None if index == 0 and last else frame_meta(index, last)
            x86 = choice.x86 if choice is not None else None     # None: the frame decides
            yield (data, name, config, input_name, meta, x86, *contexts), _inner(progress, base,
                                                                                 total)

    filtered = []

    def noted(results):
        """Each frame's profile and filter, read back from its header (the worker chose them)."""
        for used, out in results:
            header = read_header(out)
            chosen.append(header.profile)
            filtered.append(header.x86)
            yield used, out

    results = _ordered("compress", jobs(), workers, model, cluster)
    written, count = _drain(noted(results), dst, base, progress, total)
    if name == profiles.AUTO:
        net = profiles.AUTO_NETWORK
        counts = ", ".join(f"{p} {chosen.count(p)}" for p in dict.fromkeys(chosen))
        return StreamStats(read, written, sha.digest(), None, count,
                           net if net in chosen else "cm",
                           f"each frame's own sample ({counts} of {count} frames)", tuple(chosen),
                           sum(filtered))
    return StreamStats(read, written, sha.digest(), None, count, prof.name,
                       choice.why if choice is not None else "", x86_frames=sum(filtered))


def _drain(results: Iterator[tuple[int, bytes]], dst: BinaryIO, base: list,
           progress: Progress | None, total: int, sha=None) -> tuple[int, int]:
    """Write each (input length, output) to `dst` in order, hashing the output into `sha` when
    given and advancing `base` (input bytes done) for progress; (bytes written, frames)."""
    written = count = 0
    for used, out in results:
        dst.write(out)
        if sha is not None:
            sha.update(out)
        written += len(out)
        count += 1
        base[0] += used
        if progress is not None:
            progress(base[0], max(total, base[0]))
    return written, count


def _inner(progress: Progress | None, base: list, total: int):
    """Progress within one frame (coded here only: a worker process cannot report back)."""
    if progress is None:
        return None
    return lambda done, _n: progress(base[0] + done, max(total, base[0] + done))


def decompress_stream(src: BinaryIO, dst: BinaryIO, model=None, *, checkpoint=None,
                      progress: Progress | None = None, total: int = 0,
                      source: str = "input", workers: int = 1, cluster=None) -> StreamStats:
    """Decode every frame of `src` into `dst`, each checked against its sha256; `total` is the
    .umc size (0 if unknown) for `progress`, which counts .umc bytes here. workers=0: chosen
    from the idle cores, and only for a file of several frames (the load is sampled then).
    `cluster`: a cluster.Cluster that decodes the frames (of a file of several)."""
    sha, read, base = hashlib.sha256(), 0, [0]
    todo = frames(src)
    first = next(todo)                          # FormatError for an empty or foreign input
    try:
        needs_model = profiles.needs_model(first[0])
    except Exception as exc:  # profiles.get raises UserError for unknown names
        raise FormatError(f"{source}: {exc}") from None
    if needs_model:
        from .api import model_for_file  # one model for every frame (they share it)
        model = model_for_file(first[0], model, checkpoint)
    if frame_of(first[0]) is None:              # one frame: decoded here
        workers, cluster = 1, None
    elif workers == 0 and cluster is None:      # automatic: a process per idle core, up to 2
        from .threads import plan
        workers = plan(2).threads

    def jobs():
        nonlocal read
        for header, blob in chain([first], todo):
            if header.model_hash != first[0].model_hash:
                raise FormatError("corrupted .umc file: its frames name different models")
            read += len(blob)
            yield (blob, source), _scaled(progress, base, len(blob), total)

    written, count = _drain(_ordered("decompress", jobs(), workers, model, cluster), dst, base,
                            progress, total, sha)
    return StreamStats(read, written, sha.digest(), first[0], count)


def _scaled(progress: Progress | None, base: list, blob_len: int, total: int):
    """Within a frame, decoded bytes -> the share of the frame's .umc bytes."""
    if progress is None:
        return None
    return lambda done, n: progress(base[0] + (blob_len * done // n if n else 0),
                                    max(total, base[0] + blob_len))
