"""Read a dataset folder and cut batches whose content is a pure function of (seed, step).

Because a batch depends only on (seed, step, rank, world), a resumed run sees exactly the bytes
the uninterrupted run would have seen, and DDP ranks take disjoint rows of one global batch.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from .features import document_features
from .corpus import DataError

IGNORE = -1  # target value for padding (no loss)


class ByteDataset:
    """train/val bytes (memory-mapped), document offsets and per-document global features."""

    def __init__(self, root: str | Path, d_globals: int):
        self.root = Path(root)
        meta = self.root / "dataset.json"
        if not meta.is_file():
            raise DataError(f"no dataset at {self.root} (dataset.json missing); build one with "
                            f"`python -m bin.prepare_data --out {self.root}`")
        try:
            self.meta = json.loads(meta.read_text(encoding="utf-8"))
            self.splits = {s: self._open(s) for s in ("train", "val")}
        except (OSError, ValueError, KeyError) as exc:
            raise DataError(f"dataset {self.root} is damaged ({exc}); rebuild it with "
                            f"bin.prepare_data") from None
        self.d_globals = d_globals
        self.features = {s: self._features(s) for s in self.splits}

    def _open(self, split: str) -> tuple[np.ndarray, np.ndarray]:
        data = np.memmap(self.root / f"{split}.bin", dtype=np.uint8, mode="r")
        docs = np.load(self.root / f"{split}_docs.npy").astype(np.int64)
        expected = self.meta["splits"][split]["bytes"]
        if data.shape[0] != expected:
            raise ValueError(f"{split}.bin has {data.shape[0]} bytes, dataset.json says {expected}")
        return data, docs

    def _features(self, split: str) -> np.ndarray:
        data, docs = self.splits[split]
        ends = np.append(docs[1:], data.shape[0])
        return np.stack([document_features(data[s:e], self.d_globals)
                         for s, e in zip(docs, ends, strict=True)]) if len(docs) else \
            np.zeros((0, self.d_globals), np.float32)

    def size(self, split: str) -> int:
        return int(self.splits[split][0].shape[0])

    def _doc_of(self, split: str, starts: np.ndarray) -> np.ndarray:
        return np.searchsorted(self.splits[split][1], starts, side="right") - 1

    def batch(self, step: int, batch_size: int, seq_len: int, seed: int, pack: bool,
              rank: int = 0, world: int = 1) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(x, y, g) for one training step: x, y int64 (B, T); g float32 (B, d_globals).

        pack=True: windows at uniform random offsets (crossing document boundaries).
        pack=False: each row starts at a random document's start; rows past the document's
        end are padded (x=0, y=IGNORE).
        """
        data, docs = self.splits["train"]
        n = data.shape[0]
        if n < seq_len + 1:
            raise DataError(f"the training split has {n} bytes, fewer than training.seq_len+1="
                            f"{seq_len + 1}")
        rng = np.random.default_rng([seed, step])
        total = batch_size * world
        if pack:
            starts = rng.integers(0, n - seq_len, size=total)
            lengths = np.full(total, seq_len)
        else:
            ends = np.append(docs[1:], n)
            pick = rng.integers(0, len(docs), size=total)
            starts = docs[pick]
            lengths = np.minimum(seq_len, ends[pick] - starts - 1)
        rows = slice(rank * batch_size, (rank + 1) * batch_size)
        return self._cut("train", starts[rows], lengths[rows], seq_len)

    def _cut(self, split: str, starts: np.ndarray, lengths: np.ndarray, seq_len: int):
        data = self.splits[split][0]
        x = np.zeros((len(starts), seq_len), np.int64)
        y = np.full((len(starts), seq_len), IGNORE, np.int64)
        for i, (s, n) in enumerate(zip(starts, lengths, strict=True)):
            if n > 0:
                chunk = np.asarray(data[s:s + n + 1], dtype=np.int64)
                x[i, :n] = chunk[:-1]
                y[i, :n] = chunk[1:]
        g = self.features[split][self._doc_of(split, starts)]
        return x, y, g

    def val_batches(self, batch_size: int, seq_len: int, max_bytes: int):
        """Fixed validation batches: consecutive windows from the start of val.bin."""
        n = self.size("val")
        windows = min((n - 1) // seq_len, max(1, max_bytes // seq_len))
        if windows < 1:
            raise DataError(f"the validation split has {n} bytes, fewer than seq_len+1")
        starts = np.arange(windows, dtype=np.int64) * seq_len
        for i in range(0, windows, batch_size):
            s = starts[i:i + batch_size]
            yield self._cut("val", s, np.full(len(s), seq_len), seq_len)
