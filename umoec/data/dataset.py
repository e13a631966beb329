"""Read a dataset folder and cut batches whose content is a pure function of (seed, step).

A dataset folder (built by bin.prepare_data, umoec/data/corpus.py):
    dataset.json                       sources, files, split sizes and document counts
    train.bin, val.bin                 the bytes of each split
    train_docs.npy, val_docs.npy       document start offsets of each split
DatasetInfo.read is the one reader of what a folder holds and whether it is whole (the trainer,
the cockpit's Datasets tab and its live estimates all use it).

Because a batch depends only on (seed, step, rank, world), a resumed run sees exactly the bytes
the uninterrupted run would have seen, and DDP ranks take disjoint rows of one global batch.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .corpus import DataError
from .features import document_features

IGNORE = -1  # target value for padding (no loss)
DATASET_JSON = "dataset.json"
SPLITS = ("train", "val")
SPLIT_FILES = ("train.bin", "val.bin", "train_docs.npy", "val_docs.npy")   # bin_path, docs_path
NOT_A_DATASET = "not a dataset: no dataset.json (build one with bin.prepare_data)"


def bin_path(folder: str | Path, split: str) -> Path:
    """The bytes of `split` ("train" or "val")."""
    return Path(folder) / f"{split}.bin"


def docs_path(folder: str | Path, split: str) -> Path:
    """The document start offsets of `split` (int64 .npy)."""
    return Path(folder) / f"{split}_docs.npy"


def read_record(folder: str | Path) -> dict:
    """The parsed dataset.json of `folder` (OSError, UnicodeDecodeError or ValueError when it
    cannot be read)."""
    return json.loads((Path(folder) / DATASET_JSON).read_text(encoding="utf-8"))


@dataclass(frozen=True)
class DatasetInfo:
    """What one dataset folder holds; `problem` is None for a whole, usable dataset, else what is
    wrong ("damaged: val.bin has 10 bytes, dataset.json says 512")."""

    name: str
    path: Path
    files: int = 0                 # source files (a file split into ranges counts once)
    train_bytes: int = 0
    val_bytes: int = 0
    train_docs: int = 0
    val_docs: int = 0
    created: str = ""
    kind: str = ""
    sources: tuple[str, ...] = ()
    problem: str | None = None
    recorded: bool = False         # dataset.json was read: the numbers above are what it says

    @property
    def total_bytes(self) -> int:
        return self.train_bytes + self.val_bytes

    @property
    def ok(self) -> bool:
        return self.problem is None

    @classmethod
    def read(cls, folder: str | Path) -> DatasetInfo:
        """What `folder` holds; never raises for a damaged folder (the problem is in the result)."""
        folder = Path(folder)
        name = folder.name
        if not (folder / DATASET_JSON).is_file():
            return cls(name, folder, problem=NOT_A_DATASET)
        try:
            meta = read_record(folder)
            splits = meta["splits"]
            train, val = splits["train"], splits["val"]
            sizes = {"train": int(train["bytes"]), "val": int(val["bytes"])}
            docs = (int(train.get("documents", 0)), int(val.get("documents", 0)))
            files = meta.get("files") or []
            if not isinstance(files, list):
                raise TypeError("'files' is not a list")
        except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as exc:
            return cls(name, folder, problem=f"damaged: dataset.json is unreadable ({exc})")
        paths = {str(f.get("path")) for f in files if isinstance(f, dict)}  # one file: two ranges
        return cls(name, folder, files=len(paths), train_bytes=sizes["train"],
                   val_bytes=sizes["val"], train_docs=docs[0], val_docs=docs[1],
                   created=str(meta.get("created", "")), kind=str(meta.get("kind", "")),
                   sources=tuple(str(s) for s in meta.get("sources") or ()),
                   problem=_split_problem(folder, sizes), recorded=True)


def _split_problem(folder: Path, sizes: dict[str, int]) -> str | None:
    missing = [f for f in SPLIT_FILES if not (folder / f).is_file()]
    if missing:
        return f"damaged: {', '.join(missing)} missing"
    for split, expected in sizes.items():
        actual = bin_path(folder, split).stat().st_size
        if actual != expected:
            return f"damaged: {split}.bin has {actual:,} bytes, dataset.json says {expected:,}"
    return None


class ByteDataset:
    """train/val bytes (memory-mapped), document offsets and per-document global features."""

    def __init__(self, root: str | Path, d_globals: int):
        self.root = Path(root)
        self.info = DatasetInfo.read(self.root)
        if self.info.problem == NOT_A_DATASET:
            raise DataError(f"no dataset at {self.root} (dataset.json missing); build one with "
                            f"`python -m bin.prepare_data --out {self.root}`")
        if self.info.problem is not None:
            raise self._damaged(self.info.problem.removeprefix("damaged: "))
        try:
            self.splits = {s: self._open(s) for s in SPLITS}
        except (OSError, ValueError) as exc:  # a .npy that is not one, a file replaced meanwhile
            raise self._damaged(exc) from None
        self.d_globals = d_globals
        self.features = {s: self._features(s) for s in self.splits}

    def _damaged(self, why: object) -> DataError:
        return DataError(f"dataset {self.root} is damaged ({why}); rebuild it with "
                         "bin.prepare_data")

    def _open(self, split: str) -> tuple[np.ndarray, np.ndarray]:
        data = np.memmap(bin_path(self.root, split), dtype=np.uint8, mode="r")
        docs = np.load(docs_path(self.root, split)).astype(np.int64)
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
