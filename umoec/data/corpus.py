"""Build a byte dataset folder from files (bin.prepare_data).

DIR/
  train.bin, val.bin          raw bytes of the documents, back to back
  train_docs.npy, val_docs.npy  uint64 start offset of every document (document boundaries)
  dataset.json                sources, per-file bytes/sha256/split, split sizes, checksums

A document is one input file. Files are split into train/val by a seeded shuffle (so a file is
never in both). A single file is split by byte ranges: of its first --max-bytes bytes, the last
val_fraction is validation; enwik8 (a single 100,000,000-byte file) uses its standard 90M/5M/5M
split instead (the last 5M, "test", is recorded but not written). Splits are written a piece at a
time: memory stays bounded whatever the input's size. With no sources, the default corpus is the
Python standard library's own sources and docs (pydoc topics), present on every Python install.
"""
from __future__ import annotations

import gzip
import hashlib
import json
import os
import random
import sysconfig
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..run.atomic import atomic_write, atomic_write_text

ENWIK8_SIZE = 100_000_000
ENWIK8_SPLIT = (90_000_000, 5_000_000)  # train, val; the remaining 5M are the test part
DEFAULT_MAX_BYTES = 16_000_000
MAX_WEIGHT = 100.0                       # --weight: copies of a source's training files, at most
CHUNK = 1 << 22                          # bytes read at a time while a split is written
SKIP_DIRS = {"site-packages", "dist-packages", "__pycache__", "test", "tests", "idlelib",
             "lib2to3", "ensurepip", "turtledemo"}


class DataError(ValueError):
    """A dataset cannot be built or read; the message says why and what to do."""


@dataclass(frozen=True)
class Document:
    path: Path
    size: int                 # bytes the document holds (uncompressed, for a gzip file)
    gunzip: bool = False      # read through gzip (manual pages, Debian changelogs)
    cap: int = 0              # read at most this many bytes (0: all)
    start: int = 0            # first byte taken (a byte range of a single-file corpus)
    source: int = 0           # which --source it came from (its weight)

    def read(self) -> bytes:
        return b"".join(self.chunks())

    def chunks(self) -> Iterable[bytes]:
        """The document's bytes in pieces of at most CHUNK: memory stays bounded whatever the
        file's size."""
        left = self.cap or -1
        with (gzip.open(self.path, "rb") if self.gunzip else open(self.path, "rb")) as fh:
            if self.start:
                fh.seek(self.start)
            while left:
                piece = fh.read(CHUNK if left < 0 else min(CHUNK, left))
                if not piece:
                    return
                left -= len(piece) if left > 0 else 0
                yield piece


def default_sources() -> list[Path]:
    """The standard library's .py sources (docs included: pydoc_data/topics.py)."""
    return [Path(sysconfig.get_paths()["stdlib"])]


def _walk(source: Path) -> Iterable[Path]:
    if source.is_file():
        yield source
        return
    for dirpath, dirnames, filenames in os.walk(source):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith("."))
        for name in sorted(filenames):
            if not name.startswith("."):
                yield Path(dirpath) / name


def collect(sources: list[Path], default: bool) -> list[Document]:
    """Every readable file under `sources` (only .py files for the default corpus), sorted."""
    docs = []
    for index, source in enumerate(sources):
        if not source.exists():
            raise DataError(f"source {source} does not exist")
        for path in _walk(source):
            if default and path.suffix != ".py":
                continue
            try:
                size = path.stat().st_size
            except OSError:
                continue
            if size > 0 and os.access(path, os.R_OK):
                docs.append(Document(path, size, source=index))
    if not docs:
        raise DataError(f"no readable, non-empty files under {', '.join(map(str, sources))}")
    return docs


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _write_split(out: Path, name: str, docs: list[Document], files: list[dict],
                 log: Callable[[str], None]) -> dict:
    """Stream `docs` into NAME.bin (no more than CHUNK bytes in memory), record each document's
    start offset, size and sha256 (appended to `files`) and the split's totals."""
    offsets = np.zeros(len(docs), dtype=np.uint64)
    whole = hashlib.sha256()
    pos = 0

    def write(fh):
        nonlocal pos
        for i, doc in enumerate(docs):
            if i and i % 200 == 0:
                log(f"read {i:,}/{len(docs):,} {name} files")
            offsets[i] = pos
            one, n = hashlib.sha256(), 0
            for piece in doc.chunks():
                fh.write(piece)
                whole.update(piece)
                one.update(piece)
                n += len(piece)
            pos += n
            entry = {"path": str(doc.path), "bytes": n, "sha256": one.hexdigest(), "split": name}
            if doc.start or doc.cap:
                entry["range"] = [doc.start, doc.start + n]
            files.append(entry)

    atomic_write(out / f"{name}.bin", write)
    atomic_write(out / f"{name}_docs.npy", lambda fh: np.save(fh, offsets))
    return {"bytes": pos, "documents": len(docs), "sha256": whole.hexdigest()}


def prepare(out: Path, sources: list[Path] | None = None, val_fraction: float = 0.05,
            seed: int = 1234, max_bytes: int = DEFAULT_MAX_BYTES,
            log: Callable[[str], None] = lambda line: None, corpus: str = "",
            weights: list[float] | None = None) -> dict:
    """Build the dataset folder `out`; returns the dataset.json record. `log` gets progress lines.
    corpus="general": the default model's corpus (general.py) instead of `sources`. `weights`
    (one per source): how many times each source's training files are written to train.bin
    (a fraction: that share of its files once more, chosen by the seed); validation is written
    once, unweighted, so it measures the sources as they are."""
    if not 0.0 < val_fraction < 0.5:
        raise DataError(f"--val-fraction={val_fraction} must be between 0 and 0.5")
    if weights is not None:
        if not sources or len(weights) != len(sources):
            raise DataError(f"--weight was given {len(weights or [])} times for "
                            f"{len(sources or [])} --source: give one weight per source, in order")
        bad = [w for w in weights if not 0.0 < w <= MAX_WEIGHT]
        if bad:
            raise DataError(f"--weight={bad[0]:g} must be in (0, {MAX_WEIGHT:g}]")
    if corpus:
        return _prepare_general(out, val_fraction, seed, max_bytes, log, corpus)
    default = not sources
    sources = [Path(s) for s in sources] if sources else default_sources()
    docs = collect(sources, default)
    log(f"found {len(docs):,} files, {sum(d.size for d in docs):,} bytes under "
        f"{', '.join(map(str, sources))}")
    out.mkdir(parents=True, exist_ok=True)
    if len(docs) == 1 and docs[0].size == ENWIK8_SIZE and docs[0].path.name.startswith("enwik8"):
        record = _prepare_enwik8(out, docs[0])
    elif len(docs) == 1:
        record = _prepare_one_file(out, docs[0], val_fraction, max_bytes, log)
    else:
        record = _prepare_files(out, docs, val_fraction, seed, max_bytes, log, weights)
    if weights is not None and "split_rule" in record:
        log("one file: --weight has nothing to weigh against and is ignored")
    record.update(created=time.strftime("%Y-%m-%d %H:%M:%S"), name=out.name,
                  sources=[str(s) for s in sources],
                  kind=_kind(record, default))
    if weights is not None:
        record["weights"] = [float(w) for w in weights]
    atomic_write_text(out / "dataset.json", json.dumps(record, indent=1) + "\n")
    return record


def _kind(record: dict, default: bool) -> str:
    if default:
        return "default (Python standard library sources and docs)"
    if record.get("enwik8"):
        return "enwik8 (standard split)"
    return record.get("split_rule") or "files"


def weighted(docs: list[Document], ids: list[int], weights: list[float] | None,
             seed: int) -> list[int]:
    """The training files with each source's weight: floor(w) copies of every file of the source,
    and one more of a seeded random share frac(w) of them."""
    if weights is None:
        return ids
    rng = random.Random(seed + 1)
    out: list[int] = []
    for copy in range(int(max(weights))):
        out += [i for i in ids if copy < int(weights[docs[i].source])]
    for i in ids:   # the fractional part, file by file, in a fixed order
        w = weights[docs[i].source]
        if rng.random() < w - int(w):
            out.append(i)
    return out


def _prepare_files(out: Path, docs: list[Document], val_fraction: float, seed: int,
                   max_bytes: int, log: Callable[[str], None],
                   weights: list[float] | None = None) -> dict:
    order = list(range(len(docs)))
    random.Random(seed).shuffle(order)
    total = sum(d.size for d in docs)
    budget = min(total, max_bytes)
    chosen, used = [], 0
    for i in order:  # a random subset of whole files within the byte budget
        if used + docs[i].size <= budget or not chosen:
            chosen.append(i)
            used += docs[i].size
    if len(chosen) < 2:  # one file fits the budget: split it by byte ranges
        record = _prepare_one_file(out, docs[chosen[0]], val_fraction, max_bytes, log)
        record["skipped_files"] = len(docs) - 1
        return record
    val_target = max(1, int(used * val_fraction))
    val_ids, val_bytes = [], 0
    for i in chosen:
        if val_bytes >= val_target or len(val_ids) == len(chosen) - 1:
            break
        val_ids.append(i)
        val_bytes += docs[i].size
    val_set = set(val_ids)
    train_ids = sorted(i for i in chosen if i not in val_set)
    val_ids = sorted(val_ids)
    log(f"taking {len(chosen):,} files ({used:,} bytes): {len(train_ids):,} train, "
        f"{len(val_ids):,} val")
    files: list[dict] = []
    train_written = weighted(docs, train_ids, weights, seed)
    if weights is not None:
        log(f"weights {', '.join(f'{w:g}' for w in weights)}: {len(train_written):,} training "
            f"files written for {len(train_ids):,}")
    splits = {s: _write_split(out, s, [docs[i] for i in ids], files, log)
              for s, ids in (("train", train_written), ("val", val_ids))}
    return {"format": 1, "seed": seed, "val_fraction": val_fraction,
            "skipped_files": len(docs) - len(chosen), "splits": splits, "files": files}


def _prepare_one_file(out: Path, doc: Document, val_fraction: float, max_bytes: int,
                      log: Callable[[str], None]) -> dict:
    """One file: its first min(size, max_bytes) bytes, of which the last val_fraction is the
    validation range (held out as one block, as enwik8's standard split does)."""
    used = min(doc.size, max_bytes)
    n_val = max(1, int(used * val_fraction))
    if used - n_val < 2:
        raise DataError(f"{doc.path} holds {doc.size} bytes: too few to split into training and "
                        "validation ranges")
    n_train = used - n_val
    log(f"one file: bytes 0..{n_train:,} train, {n_train:,}..{used:,} val"
        + (f" (the first {used:,} of {doc.size:,}; raise --max-bytes for more)"
           if used < doc.size else ""))
    files: list[dict] = []
    splits = {"train": _write_split(out, "train", [Document(doc.path, n_train, cap=n_train)],
                                    files, log),
              "val": _write_split(out, "val", [Document(doc.path, n_val, cap=n_val,
                                                        start=n_train)], files, log)}
    return {"format": 1, "val_fraction": val_fraction, "splits": splits, "files": files,
            "split_rule": f"one file: first {n_train:,} bytes train, next {n_val:,} bytes val"
                          + (f", last {doc.size - used:,} not taken (--max-bytes)"
                             if used < doc.size else "")}


def _prepare_general(out: Path, val_fraction: float, seed: int, max_bytes: int,
                     log: Callable[[str], None], corpus: str) -> dict:
    from .general import HOLD_OUT, collect_general, sources
    if corpus != "general":
        raise DataError(f"unknown corpus {corpus!r} (known: general)")
    # max_bytes caps the total; the sources keep their shares of it
    docs, summary = collect_general(seed, max_bytes / sum(s.budget for s in sources()), log)
    out.mkdir(parents=True, exist_ok=True)
    record = _prepare_files(out, docs, val_fraction, seed, sum(d.size for d in docs), log)
    record.update(created=time.strftime("%Y-%m-%d %H:%M:%S"), name=out.name, sources=summary,
                  kind=f"general (stdlib, man pages, /usr/share/doc, licenses; 1 file in "
                       f"{HOLD_OUT} held out)")
    atomic_write_text(out / "dataset.json", json.dumps(record, indent=1) + "\n")
    return record


def _prepare_enwik8(out: Path, doc: Document) -> dict:
    n_train, n_val = ENWIK8_SPLIT
    files: list[dict] = []
    splits = {"train": _write_split(out, "train", [Document(doc.path, n_train, cap=n_train)],
                                    files, lambda line: None),
              "val": _write_split(out, "val", [Document(doc.path, n_val, cap=n_val,
                                                        start=n_train)], files, lambda line: None)}
    return {"format": 1, "enwik8": True, "split_rule": "enwik8 standard: first 90M train, next 5M "
            "val, last 5M test (not written)", "splits": splits, "files": files}
