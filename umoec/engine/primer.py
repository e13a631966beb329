"""A coding model's primer: text of the model's domain stored in its .umm file, which the mixing
stage learns before coding (umoec/codec/cm.py, version 3).

A primed peer (zpaq, PPMd given the training text first) carries exact context: every repeated
identifier or line of that text is one match away. The network learned the domain's statistics
but not its text; the primer gives the mixing stage's counters, mixers and match model that text.
It is a tensor of the model (xz-compressed bytes), so the model's hash covers it and a decoder
with the model has it. Priming costs a pass of the stage over the text at the start of every
file (kept per process: a second file with the same model reuses it).
"""
from __future__ import annotations

import hashlib
import lzma
import threading

import numpy as np

from . import modelfile as mf

TENSOR = "primer.xz"
MAX_BYTES = 8 << 20          # the stage's tables hold 4 M counters: more text mostly overwrites
_XZ = {"format": lzma.FORMAT_XZ, "check": lzma.CHECK_CRC64, "preset": 9 | lzma.PRESET_EXTREME}


def attach(m: mf.ModelFile, text: bytes) -> mf.ModelFile:
    """`m` with `text` as its primer (replacing any): a new model, with a new hash."""
    text = bytes(text)
    if not 0 < len(text) <= MAX_BYTES:
        raise mf.ModelFileError(f"a primer holds 1 to {MAX_BYTES:,} bytes, not {len(text):,}")
    tensors = {k: v for k, v in m.tensors.items() if k != TENSOR}
    tensors[TENSOR] = np.frombuffer(lzma.compress(text, **_XZ), dtype=np.uint8).copy()
    info = dict(m.info, primer={"bytes": len(text), "sha256": hashlib.sha256(text).hexdigest()})
    return mf.make(m.name, m.config, tensors, info)


_cache: dict[str, bytes] = {}
_lock = threading.Lock()


def text_of(m: mf.ModelFile) -> bytes:
    """The model's primer (b"" without one). The model's hash already vouched for the bytes."""
    blob = m.tensors.get(TENSOR)
    if blob is None:
        return b""
    with _lock:
        if m.hash in _cache:
            return _cache[m.hash]
    try:
        text = lzma.decompress(np.ascontiguousarray(blob, dtype=np.uint8).tobytes(),
                               format=lzma.FORMAT_XZ)
    except lzma.LZMAError as exc:
        raise mf.ModelFileError(f"model {m.label()}: its primer cannot be read ({exc})") from None
    if not 0 < len(text) <= MAX_BYTES:
        raise mf.ModelFileError(f"model {m.label()}: its primer holds {len(text):,} bytes "
                                f"(1 to {MAX_BYTES:,} allowed)")
    with _lock:
        _cache.clear()                    # one model's primer at a time
        _cache[m.hash] = text
    return text
