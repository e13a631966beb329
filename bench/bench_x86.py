"""The x86 filter and the stage's contexts for binary data (versions 15 and 16) on this machine's
own executables, beside the classical compressors, in one run (docs/compress.md#the-x86-filter,
#version-15-of-the-stage-contexts-for-binary-data and #version-16-... quote it).

Files: `ls`, `bash`, `perl`, libc and libstdc++, each cut to BENCH_X86_BYTES
(default 1,000,000; a missing file is left out). Columns, bits per byte: the cm profile as it
was before both (version 10, no filter), with the filter alone, as `umc` decides both (every
file decoded back; "+x86", "v15" or "v16" say what it chose), what `umc` (auto, the default model)
writes, xz -9e with and without its own x86 filter (BCJ), then every installed strong peer
(PPMd, zpaq -m5, bzip3, paq9a; one that fails on a file is nan, its reason printed).
Numbers, not pass/fail; run with nothing else running.
"""
from __future__ import annotations

import lzma
import os
import shutil
import sys
import time
from pathlib import Path

from bench import peers
from umoec import units
from umoec.codec import read_header
from umoec.codec.codec import _check_predictor
from umoec.compress.api import (
    compress_bytes,
    compress_frame,
    decompress_bytes,
    open_model,
    stage_for,
)

XZ_X86 = [{"id": lzma.FILTER_X86}, {"id": lzma.FILTER_LZMA2, "preset": 9 | lzma.PRESET_EXTREME}]


def executables() -> dict[str, Path]:
    """name -> path of the x86 executables every Debian machine has (perl and bash are
    essential packages), and libstdc++ where it is installed."""
    lib = next((d for d in (Path("/usr/lib/x86_64-linux-gnu"), Path("/lib/x86_64-linux-gnu"))
                if d.is_dir()), Path("/usr/lib"))
    found = {"ls": shutil.which("ls"), "bash": shutil.which("bash"), "perl": shutil.which("perl"),
             "libc": lib / "libc.so.6", "libstdc++": lib / "libstdc++.so.6"}
    return {k: Path(v).resolve() for k, v in found.items() if v and Path(v).is_file()}


def row(data: bytes, model, strong: list[str]) -> dict[str, float]:
    """bits per byte of each column for `data` (and the seconds of the filtered cm run)."""
    off = compress_frame(data, None, profile="cm", x86=False, binary=False, record=0)
    filtered = compress_frame(data, None, profile="cm", x86=True, binary=False, record=0)
    t0 = time.perf_counter()
    on = compress_bytes(data, None, profile="cm")
    seconds = time.perf_counter() - t0
    auto = compress_bytes(data, model, profile="auto")
    for blob in (off, filtered, on, auto):
        if decompress_bytes(blob, model) != data:
            raise SystemExit("round trip failed")
    version = _check_predictor(read_header(on), stage_for(read_header(on), None))
    out = {"cm v10": units.bpb(len(off), len(data)),
           "cm v10+x86": units.bpb(len(filtered), len(data)),
           f"cm v{version}" + ("+x86" if read_header(on).x86 else ""): units.bpb(len(on), len(data)),
           "umc (auto)": units.bpb(len(auto), len(data)),
           "xz -9e": units.bpb(len(lzma.compress(data, preset=9 | lzma.PRESET_EXTREME)), len(data)),
           "xz -9e --x86": units.bpb(len(lzma.compress(data, format=lzma.FORMAT_XZ,
                                                       filters=XZ_X86)), len(data))}
    out.update(peers.columns(data, strong))
    out["cm s"] = seconds
    return out


def main() -> None:
    limit = int(os.environ.get("BENCH_X86_BYTES", "1000000"))
    model = open_model()
    strong, missing = peers.strong()
    print(f"bits per byte (lower is better), the first {limit:,} bytes of each file; model "
          f"{model.label()}" + (f"; not installed here: {', '.join(missing)}" if missing else ""))
    for name, path in executables().items():
        data = path.read_bytes()[:limit]
        if not data:
            continue
        peers.print_row(name, 7, len(data), row(data, model, strong))


if __name__ == "__main__":
    sys.exit(main())
