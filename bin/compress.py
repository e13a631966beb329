"""python -m bin.compress INPUT OUTPUT.umc --config CFG --checkpoint CKPT --profile turbo|fast|balanced

Compresses a file with a trained checkpoint. Prints one summary line: raw and compressed size,
bits per byte, ratio, seconds, bytes/s. Exit 0 on success, 2 on bad input, 1 on failure.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from umoec import config as C
from umoec.cli import UserError, add_common, run_main
from umoec.compress.profiles import PROFILES
from umoec.compress.threads import prepare
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
    p.add_argument("--threads", type=int, help="torch threads (recorded in the file; the decoder "
                   "runs the same count); default: the profile's count (turbo 2) when that many "
                   "cores are idle, else 1")
    add_common(p)
    a = p.parse_args(argv)
    if a.threads is not None and not 1 <= a.threads <= 256:
        raise UserError(f"--threads must be in 1..256, got {a.threads}")
    cfg = C.load(a.config, a.overrides) if a.config else None
    # before torch loads: the thread count and OpenMP's wait policy (umoec/compress/threads.py)
    plan = prepare(a.threads or PROFILES[a.profile].threads, fixed=a.threads is not None)
    from umoec.compress.api import compress_path
    bar = ProgressBar("compress")
    try:
        res = compress_path(a.input, a.output, a.checkpoint, config=cfg, profile=a.profile,
                            threads=plan.threads, progress=bar)
    finally:
        bar.close()
    print(f"compress: {a.input} -> {a.output}: {res.stats.summary()} (profile {res.profile}, "
          f"{res.streams} streams, {res.threads} thread{'s' if res.threads > 1 else ''}, "
          f"checkpoint step {res.checkpoint_step})")
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main, "compress"))
