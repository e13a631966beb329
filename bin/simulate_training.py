"""python -m bin.simulate_training --steps N --out RUNDIR [--live] [--resume CKPT]

Writes a realistic simulated run (every metrics table, logs, status, checkpoints) so the cockpit
can be shown and tested without training. See umoec/sim/simulator.py.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from umoec import config as C
from umoec.cli import EXIT_FAILURE, UserError, add_common, run_main
from umoec.run import RunDir
from umoec.run.signals import catch_early
from umoec.run.status import RunState
from umoec.sim.simulator import SimOptions, SimulationError, Simulator


def parse(argv) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bin.simulate_training", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--steps", type=int, default=5000, help="steps to simulate (default 5000)")
    p.add_argument("--out", required=True, type=Path, help="run folder to create")
    p.add_argument("--config", type=Path, help="YAML config (default: configs/tier1_micro.yaml)")
    p.add_argument("--resume", type=Path, metavar="CKPT",
                   help="continue the run in --out from one of its simulated checkpoints")
    p.add_argument("--live", action="store_true", help="write in real time (see --rate)")
    p.add_argument("--rate", type=float, default=20.0, help="steps per second with --live")
    p.add_argument("--crash-at", type=int, metavar="STEP", help="fail at STEP (exit code 1)")
    p.add_argument("--stall-at", type=int, metavar="STEP",
                   help="stop heartbeats at STEP and hang until signalled")
    p.add_argument("--quiet", action="store_true", help="do not echo training.log lines")
    add_common(p)
    return p.parse_args(argv)


def main(argv=None) -> int:
    a = parse(argv)
    if a.steps < 1:
        raise UserError(f"--steps={a.steps} must be >= 1")
    if a.rate <= 0:
        raise UserError(f"--rate={a.rate} must be > 0")
    run = RunDir(a.out)
    if a.resume is not None:
        if not run.config_path.exists():
            raise UserError(f"{a.out} holds no run to resume (no config.yaml)")
        base = C.load(run.config_path, a.overrides)
    else:
        if run.exists():
            raise UserError(f"{a.out} already holds a run; choose a new --out or use --resume")
        base = C.load(a.config, a.overrides) if a.config else C.load_preset("tier1_micro",
                                                                             a.overrides)
    overrides = [f"training.steps={a.steps}"]
    t = base.training
    if t.warmup_steps > a.steps:  # keep the warmup's share of a shortened run
        overrides.append(f"training.warmup_steps={a.steps * t.warmup_steps // t.steps}")
    cfg = C.build(C.apply_overrides(C.to_dict(base), overrides), "simulation settings")
    opts = SimOptions(live=a.live, rate=a.rate, crash_at=a.crash_at, stall_at=a.stall_at,
                      echo=not a.quiet)
    try:
        state = Simulator(run, cfg, opts).run_all(resume=a.resume)
    except SimulationError as exc:
        raise UserError(str(exc), EXIT_FAILURE) from None
    print(f"simulate_training: {state.value} -> {run.root}")
    return 0 if state in (RunState.COMPLETED, RunState.STOPPED) else EXIT_FAILURE


if __name__ == "__main__":
    catch_early()  # a Stop (SIGTERM) while still starting ends in a checkpoint, not a dead process
    sys.exit(run_main(main, "simulate_training"))
