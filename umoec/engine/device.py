"""The engine's int8 matrix products on a torch device (a GPU), when asked for.

UMOEC_ENGINE_DEVICE=cuda (or cuda:N, or cpu for torch's own CPU kernels) runs every product of
`fixed.matmul8` and the experts' batched products through torch on that device; everything else
(quantisation, requantisation, the SSM mixer, routing, the mixing stage) stays on the CPU. The
result cannot differ from numpy's: the operands are int8 values, the products are taken in
float64, where every partial sum of up to 2**53 is an exact integer, so no summation order,
tensor-core format (TF32 is never involved in float64) or split of the sum changes a bit. Unset
or empty: numpy, no torch import.

Products are small (a few hundred streams by the model's width), so a GPU mostly pays its
transfer and launch costs; the point is that a GPU machine may code with its GPU and read files
written anywhere, not speed (docs/engine.md has the measurements).
"""
from __future__ import annotations

import os
from typing import Any

import numpy as np

from ..errors import UserError

ENV = "UMOEC_ENGINE_DEVICE"


class DeviceError(UserError):
    """The device named by UMOEC_ENGINE_DEVICE cannot be used (no torch, no such GPU)."""


class Products:
    """Exact int8 products on one torch device; weights are copied there once."""

    def __init__(self, name: str):
        try:
            import torch
        except ImportError as exc:
            raise DeviceError(f"{ENV}={name} needs torch, which is not installed") from exc
        try:
            self.dev = torch.device(name)
        except RuntimeError as exc:
            raise DeviceError(f"{ENV}={name}: not a torch device name ({exc})") from exc
        if self.dev.type == "cuda" and not torch.cuda.is_available():
            raise DeviceError(f"{ENV}={name}: this torch build or machine has no CUDA device")
        self.torch = torch
        self.name = str(self.dev)
        self._weights: dict[int, tuple[np.ndarray, Any]] = {}

    def _weight(self, w: np.ndarray):
        """The device copy of a weight array, kept while the array lives (ids are not reused
        while the array is held here)."""
        hit = self._weights.get(id(w))
        if hit is None or hit[0] is not w:
            hit = (w, self.torch.from_numpy(np.ascontiguousarray(w, dtype=np.float64)).to(self.dev))
            self._weights[id(w)] = hit
        return hit[1]

    def matmul(self, x8: np.ndarray, w8: np.ndarray) -> np.ndarray:
        """x8 (..., K) @ w8 (..., K, N), int8 values -> float64 integers, exact."""
        x = self.torch.from_numpy(np.ascontiguousarray(x8, dtype=np.float64)).to(self.dev)
        return self.torch.matmul(x, self._weight(w8)).cpu().numpy()


_products: Products | None = None
_chosen: str | None = None


def refresh() -> Products | None:
    """Read UMOEC_ENGINE_DEVICE again: at the start of each coding (a predictor's init_state),
    so a test or a worker may set it before coding, while a product pays no lookup."""
    global _products, _chosen
    name = os.environ.get(ENV, "").strip()
    if name != _chosen:
        _products, _chosen = (Products(name) if name else None), name
    return _products


def products() -> Products | None:
    """The device products chosen by the last refresh(), None for numpy."""
    return _products
