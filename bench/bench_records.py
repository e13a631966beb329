"""The stage's contexts for records (version 16) on tables and record files, beside the classical
compressors, in one run (docs/compress.md#version-16-of-the-stage-contexts-for-records quotes it).

Files: tables this machine has (the dynamic linker's cache, the C locale's character table,
shared-mime-info's cache, man-db's index; each cut to BENCH_RECORDS_BYTES, default 1,000,000;
a missing one is left out), tables written here with the standard library and numpy (a float64
table saved by np.save: a parameter grid and two computed columns; a SQLite database of this
machine's documentation files; fixed-size binary records), and any files named in
BENCH_RECORDS_FILES (separated by ':'). Columns, bits per byte: the cm profile with version 10
and with version 15 (forced), as `umc --profile cm` decides (every file decoded back; "v16/r"
says the record length it took), then xz -9e and every installed strong peer (zpaq -m5,
PPMd, bzip3, paq9a; one that fails on a file is nan, its reason printed).
Numbers, not pass/fail; run with nothing else running.
"""
from __future__ import annotations

import io
import lzma
import os
import sqlite3
import struct
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from bench import peers
from umoec import units
from umoec.codec import read_header
from umoec.codec.codec import _check_predictor
from umoec.compress.api import compress_bytes, compress_frame, decompress_bytes, stage_for

TABLES = {"ld.so.cache": "/etc/ld.so.cache", "LC_CTYPE": "/usr/lib/locale/C.utf8/LC_CTYPE",
          "mime.cache": "/usr/share/mime/mime.cache", "man index.db": "/var/cache/man/index.db"}


def float_table() -> bytes:
    """A .npy file of float64 rows (x, f(x), a, b, q) over a grid of parameters a, b and levels q,
    as numerical code saves its results (an unusual case: whole values repeat along columns)."""
    rows = []
    for a in np.arange(1, 21) / 10:
        for b in np.arange(-10, 11) / 10:
            for q in (0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99):
                x = np.tan(np.pi * (q - 0.5)) * a + b
                rows.append((x, np.exp(-abs(x) ** a) / (2 * a), a, b, q))
    out = io.BytesIO()
    np.save(out, np.array(rows, dtype="<f8"))
    return out.getvalue()


def doc_database() -> bytes:
    """A SQLite database (the standard library's) of this machine's documentation files: path,
    size, mode, modification time, suffix."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "docs.sqlite"
        con = sqlite3.connect(path)
        con.execute("create table f (id integer primary key, path text, size integer, "
                    "mode integer, mtime real, suffix text)")
        found = sorted(p for p in Path("/usr/share/doc").rglob("*") if p.is_file())[:4000]
        for i, p in enumerate(found):
            st = p.stat()
            con.execute("insert into f values (?, ?, ?, ?, ?, ?)",
                        (i, str(p), st.st_size, st.st_mode, st.st_mtime, p.suffix))
        con.commit()
        con.close()
        return path.read_bytes()


def binary_records(n: int = 30_000) -> bytes:
    """Rows of 12 bytes: a counter, a float, a small code, two bytes of padding."""
    return b"".join(struct.pack("<IfH2x", i * 7, i * 0.5, (i * 2654435761 >> 13) % 100)
                    for i in range(n))


def inputs(limit: int) -> dict[str, bytes]:
    out = {}
    for name, path in TABLES.items():
        if Path(path).is_file():
            out[name] = Path(path).read_bytes()[:limit]
    out["float64 table (.npy)"] = float_table()
    out["SQLite of /usr/share/doc"] = doc_database()
    out["12-byte records"] = binary_records()
    for path in filter(None, os.environ.get("BENCH_RECORDS_FILES", "").split(":")):
        out[Path(path).name] = Path(path).read_bytes()[:limit]
    return {k: v for k, v in out.items() if v}


def row(data: bytes, strong: list[str]) -> dict[str, float]:
    """bits per byte of each column for `data` (and the seconds of the chosen cm run)."""
    v10 = compress_frame(data, None, profile="cm", binary=False, record=0)
    v15 = compress_frame(data, None, profile="cm", binary=True, record=0)
    t0 = time.perf_counter()
    chosen = compress_bytes(data, None, profile="cm")
    seconds = time.perf_counter() - t0
    for blob in (v10, v15, chosen):
        if decompress_bytes(blob) != data:
            raise SystemExit("round trip failed")
    header = read_header(chosen)
    version = _check_predictor(header, stage_for(header, None))
    record = header.metadata.get("record")
    out = {"cm v10": units.bpb(len(v10), len(data)), "cm v15": units.bpb(len(v15), len(data)),
           f"umc cm (v{version}" + (f"/{record})" if record else ")"):
               units.bpb(len(chosen), len(data)),
           "xz -9e": units.bpb(len(lzma.compress(data, preset=9 | lzma.PRESET_EXTREME)), len(data))}
    out.update(peers.columns(data, strong))
    out["cm s"] = seconds
    return out


def main() -> None:
    limit = int(os.environ.get("BENCH_RECORDS_BYTES", "1000000"))
    strong, missing = peers.strong()
    print(f"bits per byte (lower is better), at most {limit:,} bytes of each file"
          + (f"; not installed here: {', '.join(missing)}" if missing else ""))
    for name, data in inputs(limit).items():
        peers.print_row(name, 24, len(data), row(data, strong))


if __name__ == "__main__":
    sys.exit(main())
