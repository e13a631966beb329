"""python -m bin.train --config FILE --out RUNDIR [--resume CKPT] [--set KEY=VALUE ...]

Trains the u-moec-tiny model into a run folder (config.yaml, metrics.db, training.log, log.csv,
status.json, checkpoints/stepNNNNNN.pt). SIGTERM/SIGINT: finish the step, save a checkpoint,
exit 0 with status `stopped`; resume with --resume RUNDIR/checkpoints/stepNNNNNN.pt.
Several GPUs: torchrun --nproc_per_node=N -m bin.train ... with hardware.gpus=N.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from umoec import config as C
from umoec.cli import EXIT_FAILURE, UserError, add_common, run_main
from umoec.data import DataError
from umoec.run import RunDir
from umoec.run.signals import catch_early


def parse(argv) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bin.train", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--config", type=Path, required=True, help="YAML config (e.g. configs/tier1_micro.yaml)")
    p.add_argument("--out", type=Path, required=True, help="run folder")
    p.add_argument("--resume", type=Path, metavar="CKPT", help="continue from this checkpoint")
    p.add_argument("--stop-at", type=int, metavar="STEP",
                   help="stop cleanly after STEP (checkpoint, status stopped), as SIGTERM would")
    p.add_argument("--time-budget", type=float, metavar="SECONDS",
                   help="stop cleanly once this much wall time has passed (checkpoint, stopped)")
    p.add_argument("--quiet", action="store_true", help="do not echo training.log lines")
    add_common(p)
    return p.parse_args(argv)


def main(argv=None) -> int:
    a = parse(argv)
    cfg = C.load(a.config, a.overrides)
    run = RunDir(a.out)
    main_rank = os.environ.get("RANK", "0") == "0"
    if a.resume is None and run.exists() and main_rank:
        raise UserError(f"{a.out} already holds a run; choose a new --out, or continue it with "
                        f"--resume {a.out}/checkpoints/stepNNNNNN.pt")
    from umoec.train.checkpoint import CheckpointError
    from umoec.train.trainer import Trainer, TrainError, TrainOptions
    try:
        state = Trainer(cfg, run, TrainOptions(stop_at=a.stop_at, time_budget_s=a.time_budget,
                                                echo=not a.quiet and main_rank),
                        a.resume).run_all()
    except (CheckpointError, DataError) as exc:
        raise UserError(str(exc)) from None
    except TrainError as exc:
        raise UserError(str(exc), EXIT_FAILURE) from None
    if main_rank:
        print(f"train: {state.value} -> {run.root}")
    return 0


if __name__ == "__main__":
    catch_early()  # a Stop (SIGTERM) while still starting ends in a checkpoint, not a dead process
    sys.exit(run_main(main, "train"))
