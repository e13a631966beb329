"""python -m bin.decompress INPUT.umc OUTPUT [--model NAME|HASH|FILE.umm | --checkpoint CKPT]

Decodes a .umc file and verifies the sha256 of the original; on any failure nothing is written.
The model is found by the hash the file records, along the model search path (umc model list);
--model or --checkpoint give it directly (it must be the same model).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from umoec.cli import run_main
from umoec.compress.profiles import most_threads
from umoec.compress.threads import prepare
from umoec.progress import ProgressBar


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m bin.decompress", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("input", type=Path)
    p.add_argument("output", type=Path)
    src = p.add_mutually_exclusive_group()
    src.add_argument("--model", help="model name, hash or .umm file")
    src.add_argument("--checkpoint", type=Path, help="the training checkpoint the model came from")
    p.add_argument("--threads", type=int, help="cores to use (turbo, fast: processes sharing "
                   "their streams; balanced: SSM mixer threads); results never depend on it; default: "
                   "two when two cores are idle, else 1")
    p.add_argument("--debug", action="store_true")
    a = p.parse_args(argv)
    prepare(a.threads or most_threads(), fixed=a.threads is not None)  # before numpy loads
    from umoec.compress.api import decompress_path
    bar = ProgressBar("decompress")
    try:
        res = decompress_path(a.input, a.output, a.model, checkpoint=a.checkpoint, progress=bar)
    finally:
        bar.close()
    print(f"decompress: {a.input} -> {a.output}: {res.stats.summary()} (sha256 verified, profile "
          f"{res.profile}, model {res.model})")
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main, "decompress"))
