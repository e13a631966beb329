"""python -m bin.compress INPUT OUTPUT.umc --config CFG --checkpoint CKPT --profile turbo|fast|balanced

Compresses a file with a trained checkpoint. Prints one summary line: raw and compressed size,
bits per byte, ratio, seconds, bytes/s. Exit 0 on success, 2 on bad input, 1 on failure.
"""
from __future__ import annotations

import os

# Before torch loads: idle OpenMP threads sleep instead of spinning (coding is many small steps).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import argparse  # noqa: E402
import sys
from pathlib import Path

from umoec import config as C
from umoec.cli import add_common, run_main
from umoec.compress.profiles import PROFILES
from umoec.progress import ProgressBar


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m bin.compress", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("input", type=Path)
    p.add_argument("output", type=Path)
    p.add_argument("--checkpoint", type=Path, required=True)
    p.add_argument("--config", type=Path, help="config whose entropy.* and lora.* settings to use "
                   "(its network must match the checkpoint's; default: the checkpoint's own)")
    p.add_argument("--profile", choices=sorted(PROFILES), default="turbo")
    p.add_argument("--threads", type=int, help="torch threads, default 1 (recorded in the file; "
                   "the decoder must use the same count)")
    add_common(p)
    a = p.parse_args(argv)
    cfg = C.load(a.config, a.overrides) if a.config else None
    from umoec.compress.api import compress_path
    bar = ProgressBar("compress")
    try:
        res = compress_path(a.input, a.output, a.checkpoint, config=cfg, profile=a.profile,
                            threads=a.threads, progress=bar)
    finally:
        bar.close()
    print(f"compress: {a.input} -> {a.output}: {res.stats.summary()} (profile {res.profile}, "
          f"{res.streams} streams, checkpoint step {res.checkpoint_step})")
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main, "compress"))
