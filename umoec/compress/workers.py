"""What a frame-coding process runs (stream.py): one frame, compressed or decoded, with the model
it was given once at start. Also what stream.py calls in-process with one worker and what a Dask
worker runs (cluster.py), so every path runs the same code. Results come back as (input length,
output bytes); an error comes back as its class and message (exception objects do not always
survive the trip between processes)."""
from __future__ import annotations

import importlib
import os

_MODEL = None


def init(model) -> None:
    """In each worker process, before the engine loads: one engine thread (the frames are the
    parallel work), and the model."""
    global _MODEL
    os.environ["UMOEC_ENGINE_THREADS"] = "1"
    _MODEL = model


def compress(data: bytes, profile: str, config, input_name: str, frame, x86, binary, record,
             progress, model):
    from .api import compress_frame
    return len(data), compress_frame(data, model, profile=profile, config=config,
                                     input_name=input_name, progress=progress, frame=frame,
                                     x86=x86, binary=binary, record=record)


def decompress(blob: bytes, source: str, progress, model):
    from .api import decompress_frame
    return len(blob), decompress_frame(blob, model, progress=progress, source=source)


def pooled(name: str, *args):
    """In a worker process: the job `name` with the worker's model."""
    return run(name, args, _MODEL)


def run(name: str, args, model):
    """The job `name` with `model` and no progress (a callback cannot cross processes), as a
    result for `unwrap` (also what a Dask worker runs: cluster.py)."""
    try:
        return ("ok", globals()[name](*args, None, model))
    except Exception as exc:      # raised again by unwrap in the parent
        return ("error", type(exc).__module__, type(exc).__qualname__, str(exc))


def unwrap(result):
    """The value of a worker's result, or its error raised again here as its own class."""
    if result[0] == "ok":
        return result[1]
    _, module, name, message = result
    try:
        cls = getattr(importlib.import_module(module), name)
        exc = cls(message)
    except Exception:
        exc = RuntimeError(f"{name}: {message}")
    raise exc
