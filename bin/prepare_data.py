"""python -m bin.prepare_data [--source PATH [--weight W] ...] --out DIR [--val-fraction F]
                             [--max-bytes N]

Builds a byte dataset (train.bin/val.bin, document offsets, dataset.json) from files or folders.
With no --source: the Python standard library's sources and docs, present on every Python
install, so nothing needs downloading. Many files are split by whole file; a single file by byte
ranges (the last --val-fraction of its first --max-bytes bytes is validation). --weight W after a
--source writes that source's training files W times (mixing proportions); --max-bytes counts
each file once. A single file named
enwik8* of exactly 100,000,000 bytes gets the standard split (90M train / 5M val / 5M test, not
written).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from umoec.cli import UserError, run_main
from umoec.data import DataError, prepare
from umoec.data.corpus import DEFAULT_MAX_BYTES


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m bin.prepare_data", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--source", action="append", type=Path, default=[], metavar="PATH",
                   help="file or folder (repeatable); default: the Python standard library")
    p.add_argument("--weight", action="append", type=float, metavar="W",
                   help="per --source, in the same order (give one for each): how many times its "
                   "training files are written to train.bin (2 = twice, 0.5 = half of them "
                   "once); validation stays unweighted. Default 1 each")
    p.add_argument("--corpus", choices=["general"], help="a built-in corpus instead of --source: "
                   "general = stdlib + man pages + /usr/share/doc + licenses, 1 file in 8 held "
                   "out (the default model's corpus, umoec/data/general.py)")
    p.add_argument("--out", type=Path, required=True, help="dataset folder to write")
    p.add_argument("--val-fraction", type=float, default=0.05)
    p.add_argument("--seed", type=int, default=1234, help="seed of the train/val file split")
    p.add_argument("--max-bytes", type=int, default=DEFAULT_MAX_BYTES,
                   help=f"cap on the bytes taken (whole files; the beginning of a single file), "
                        f"default {DEFAULT_MAX_BYTES:,}")
    p.add_argument("--debug", action="store_true")
    a = p.parse_args(argv)
    if a.max_bytes < 1024:
        raise UserError(f"--max-bytes={a.max_bytes} must be >= 1024")
    if a.corpus and a.source:
        raise UserError("give either --source or --corpus, not both")
    if a.weight and not a.source:
        raise UserError("--weight weighs the --source given with it; there is no --source")
    try:
        rec = prepare(a.out, a.source or None, a.val_fraction, a.seed, a.max_bytes,
                      log=lambda line: print(f"prepare_data: {line}", flush=True),
                      corpus=a.corpus or "", weights=a.weight)
    except DataError as exc:
        raise UserError(str(exc)) from None
    s = rec["splits"]
    print(f"prepare_data: {a.out}: train {s['train']['bytes']:,} bytes "
          f"({s['train']['documents']} documents), val {s['val']['bytes']:,} bytes "
          f"({s['val']['documents']} documents); {rec['kind']}")
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main, "prepare_data"))
