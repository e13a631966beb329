"""The general corpus of the shipped default model: text every fresh Debian + Python machine has.

No download and no extra package: the Python standard library's sources (and its docs, in
pydoc_data), the English manual pages (/usr/share/man/man1..8, gzip), the packages' documentation
(/usr/share/doc: READMEs, changelogs, copyright files, HTML/Markdown/reST; gzip read through) and
the license texts (/usr/share/common-licenses). Files with a NUL byte in their first 8 KiB are
skipped (images, binaries).

Held out: every file whose path hashes to 0 mod HOLD_OUT (sha256 of the path) is kept out of both
train and val, so a model trained here can be measured on files of each kind it never saw
(`held_out_files`, docs/models.md). Within each source, files are taken in a seeded shuffle up to
the source's byte budget, at most FILE_CAP bytes from one file; the dataset then splits them into
train/val like any file corpus.
What one machine holds differs from another's: dataset.json lists every file and its sha256.
"""
from __future__ import annotations

import gzip
import hashlib
import random
import struct
import sysconfig
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from .corpus import SKIP_DIRS, DataError, Document, _walk

HOLD_OUT = 8
SNIFF = 8192
FILE_CAP = 131072      # bytes taken from one file at most (long changelogs would crowd out the rest)


@dataclass(frozen=True)
class Source:
    name: str
    roots: tuple          # folders walked (missing ones are skipped)
    budget: int           # bytes taken at most from this source (whole files)
    suffixes: tuple = ()  # only these suffixes (empty: any text file)


def sources() -> list[Source]:
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    man = tuple(Path("/usr/share/man") / f"man{i}" for i in range(1, 9))
    return [Source("python", (stdlib,), 9_000_000, (".py",)),
            Source("manpages", man, 6_000_000),
            Source("docs", (Path("/usr/share/doc"),), 8_000_000),
            Source("licenses", (Path("/usr/share/common-licenses"),), 1_000_000)]


def held_out(path: Path) -> bool:
    """True for the files no model trained on this corpus may see (1 in HOLD_OUT)."""
    digest = hashlib.sha256(str(path).encode("utf-8", "surrogateescape")).digest()
    return digest[0] % HOLD_OUT == 0


def _gz_size(path: Path) -> int:
    """Uncompressed size from a gzip trailer (ISIZE, mod 2**32); 0 when unreadable."""
    try:
        with open(path, "rb") as fh:
            fh.seek(-4, 2)
            return struct.unpack("<I", fh.read(4))[0]
    except OSError:
        return 0


def _text_document(path: Path) -> Document | None:
    try:
        if not path.is_file() or path.is_symlink():
            return None
        gz = path.suffix == ".gz"
        if gz:
            with gzip.open(path, "rb") as fh:
                head = fh.read(SNIFF)
            size = _gz_size(path)
        else:
            with open(path, "rb") as fh:
                head = fh.read(SNIFF)
            size = path.stat().st_size
    except (OSError, EOFError, gzip.BadGzipFile):
        return None
    if size == 0 or b"\0" in head:
        return None
    return Document(path, min(size, FILE_CAP), gunzip=gz,
                    cap=FILE_CAP if size > FILE_CAP else 0)


def _candidates(src: Source) -> Iterator[Document]:
    for root in src.roots:
        if not root.exists():
            continue
        for path in _walk(root):
            if any(part in SKIP_DIRS for part in path.parts):
                continue
            if src.suffixes and path.suffix not in src.suffixes:
                continue
            doc = _text_document(path)
            if doc is not None:
                yield doc


def collect_general(seed: int = 1234, scale: float = 1.0,
                    log: Callable[[str], None] = lambda line: None) -> tuple[list[Document], dict]:
    """The documents of the general corpus (not held out), each source within its budget x scale,
    and a summary {source: {"files", "bytes"}} of what was taken."""
    chosen, summary = [], {}
    for src in sources():
        docs = [d for d in _candidates(src) if not held_out(d.path)]
        random.Random(f"{seed}:{src.name}").shuffle(docs)
        budget, used, taken = int(src.budget * scale), 0, 0
        for d in docs:
            if used + d.size <= budget:
                chosen.append(d)
                used += d.size
                taken += 1
        summary[src.name] = {"files": taken, "bytes": used, "candidates": len(docs)}
        log(f"{src.name}: {taken:,} of {len(docs):,} files, {used:,} bytes")
    if len(chosen) < 2:
        raise DataError("the general corpus found fewer than 2 text files on this machine")
    return chosen, summary


def held_out_files(kind_suffixes: tuple = (), limit: int = 0) -> list[Path]:
    """Held-out files of every source (optionally only these suffixes), sorted."""
    out = []
    for src in sources():
        for d in _candidates(src):
            if held_out(d.path) and (not kind_suffixes or d.path.suffix in kind_suffixes):
                out.append(d.path)
    out.sort()
    return out[:limit] if limit else out
