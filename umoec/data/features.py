"""The global conditioning vector (head.d_globals values) of a byte string.

The model is conditioned on these document-level statistics (AdaLN-Zero / cross-attention). In
training they describe the document a sequence comes from; when compressing, the encoder computes
them over the whole input and stores them (float32) in the .umc header, so the decoder knows them
before decoding the first byte. Pure numpy, deterministic.
"""
from __future__ import annotations

import numpy as np

_CLASSES = (  # byte classes, as boolean masks over 0..255
    np.isin(np.arange(256), np.arange(ord("a"), ord("z") + 1)),
    np.isin(np.arange(256), np.arange(ord("A"), ord("Z") + 1)),
    np.isin(np.arange(256), np.arange(ord("0"), ord("9") + 1)),
    np.isin(np.arange(256), [9, 10, 13, 32]),
    np.isin(np.arange(256), [c for c in range(33, 127) if not chr(c).isalnum()]),
    np.isin(np.arange(256), [c for c in range(32) if c not in (9, 10, 13)] + [127]),
    np.arange(256) >= 128,
)
N_FEATURES = 2 + len(_CLASSES) + 2 + 16


def document_features(data, d_globals: int) -> np.ndarray:
    """float32 (d_globals,): [log2 size/32, order-0 entropy/8, 7 class fractions, newline
    fraction, mean line length/256, 16 coarse histogram bins], truncated or zero-padded."""
    arr = np.frombuffer(data, dtype=np.uint8) if isinstance(data, (bytes, bytearray)) else \
        np.asarray(data, dtype=np.uint8)
    n = arr.shape[0]
    out = np.zeros(max(d_globals, N_FEATURES), np.float64)
    if n:
        hist = np.bincount(arr, minlength=256).astype(np.float64)
        p = hist / n
        nz = p[p > 0]
        newlines = hist[10]
        out[0] = np.log2(1.0 + n) / 32.0
        out[1] = float(-(nz * np.log2(nz)).sum()) / 8.0
        out[2:2 + len(_CLASSES)] = [p[mask].sum() for mask in _CLASSES]
        out[9] = newlines / n
        out[10] = min(1.0, n / (newlines + 1.0) / 256.0)
        out[11:27] = p.reshape(16, 16).sum(axis=1)
    return out[:d_globals].astype(np.float32)
