"""python -m bin.decompress INPUT.umc OUTPUT [--checkpoint CKPT]

Decodes a .umc file and verifies the sha256 of the original; on any failure nothing is written.
Without --checkpoint, the checkpoint path recorded at compression is used.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from umoec.cli import run_main
from umoec.compress.threads import prepare_for_file
from umoec.progress import ProgressBar


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m bin.decompress", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("input", type=Path)
    p.add_argument("output", type=Path)
    p.add_argument("--checkpoint", type=Path)
    p.add_argument("--debug", action="store_true")
    a = p.parse_args(argv)
    prepare_for_file(a.input)  # before torch loads (umoec/compress/threads.py)
    from umoec.compress.api import decompress_path
    bar = ProgressBar("decompress")
    try:
        res = decompress_path(a.input, a.output, a.checkpoint, progress=bar)
    finally:
        bar.close()
    print(f"decompress: {a.input} -> {a.output}: {res.stats.summary()} (sha256 verified, profile "
          f"{res.profile}, {res.threads} thread{'s' if res.threads > 1 else ''})")
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main, "decompress"))
