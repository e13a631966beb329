"""python -m bin.compress INPUT OUTPUT.umc [--model NAME|HASH|FILE.umm | --checkpoint CKPT]
                         [--config CFG] [--profile turbo|fast|balanced|cm|auto] [--threads N]

Compresses a file with a coding model: the shipped default model unless --model names another
(umc model list), or --checkpoint exports a training checkpoint to one first (kept in the run's
models/ folder, where decoding finds it). Prints one summary line: raw and compressed size, bits
per byte, ratio, seconds, bytes/s. Exit 0 on success, 2 on bad input, 1 on failure.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from umoec import config as C
from umoec.cli import UserError, add_common, run_main
from umoec.compress import profiles
from umoec.compress.threads import prepare
from umoec.progress import ProgressBar


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m bin.compress", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("input", type=Path)
    p.add_argument("output", type=Path)
    src = p.add_mutually_exclusive_group()
    src.add_argument("--model", help="model name, hash or .umm file (default: the shipped model)")
    src.add_argument("--checkpoint", type=Path, help="a training checkpoint, exported to a "
                     "coding model first")
    p.add_argument("--config", type=Path, help="config whose entropy.* settings to use "
                   "(default: the model's own)")
    p.add_argument("--profile", choices=profiles.names(), default="turbo",
                   help="auto: fast or cm, whichever codes a sample of the input smaller")
    p.add_argument("--threads", type=int, help="cores to use (turbo, fast: processes sharing "
                   "their streams; balanced: SSM mixer threads); results never depend on it; "
                   "default: the profile's count when that many cores are idle, else 1")
    add_common(p)
    a = p.parse_args(argv)
    if a.threads is not None and not 1 <= a.threads <= 256:
        raise UserError(f"--threads must be in 1..256, got {a.threads}")
    cfg = C.load(a.config, a.overrides) if a.config else None
    prepare(a.threads or profiles.base(a.profile).threads, fixed=a.threads is not None)  # before numpy
    from umoec.compress.api import compress_path
    bar = ProgressBar("compress")
    try:
        res = compress_path(a.input, a.output, a.model, checkpoint=a.checkpoint, config=cfg,
                            profile=a.profile, progress=bar)
    finally:
        bar.close()
    print(f"compress: {a.input} -> {a.output}: {res.stats.summary()} (profile {res.profile}, "
          f"{res.streams} streams, model {res.model})")
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main, "compress"))
