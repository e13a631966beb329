"""Write a realistic simulated run into a run folder (spec: bin/simulate_training.py).

Every table the trainer fills is filled here with plausible values (see curves.py), through the
same RunRecorder the trainer uses. Live mode paces steps in real time so the cockpit can be
watched; SIGTERM/SIGINT finish the current step, save a checkpoint and stop cleanly, as the
trainer does. Simulated checkpoints are marked `simulated: True` and hold no weights.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass
from pathlib import Path

from ..config import Config, dumps
from ..run.atomic import atomic_write
from ..run.layout import RunDir
from ..run.recorder import RunRecorder, StepRecord
from ..run.signals import StopFlag
from ..run.status import RunState
from ..schedule import lr_multiplier
from ..train.formats import SIM_FORMAT
from ..units import LN2
from . import curves

EVAL_DATASET = "default-val"
EVAL_BYTES = 1 << 20
PROFILES = ("turbo", "fast", "balanced")


class SimulationError(RuntimeError):
    """A simulated failure (--crash-at) or a checkpoint the simulator cannot resume from."""


def expand_pattern(cfg: Config) -> str:
    """block_pattern repeated cyclically to model.n_blocks characters."""
    p = cfg.model.block_pattern
    return (p * (cfg.model.n_blocks // len(p) + 1))[: cfg.model.n_blocks]


def shape_of(cfg: Config, bytes_per_sec: float | None = None) -> curves.Shape:
    pattern = expand_pattern(cfg)
    m, t = cfg.model, cfg.training
    size = m.d_model * m.n_blocks
    if bytes_per_sec is None:  # a rough CPU/GPU throughput, scaled by model size
        bytes_per_sec = 20_000.0 * 512 / size * (150.0 * max(1, cfg.hardware.gpus)
                                                 if cfg.hardware.gpus else 1.0)
    return curves.Shape(
        seed=cfg.data.seed, total_steps=t.steps, n_blocks=m.n_blocks,
        moe_blocks=tuple(i for i, c in enumerate(pattern) if c in "Ss"),
        n_routed=cfg.moe.n_routed, bias_lr=cfg.moe.bias_lr,
        mod_blocks=tuple(i for i, c in enumerate(pattern) if c.islower()) if cfg.mod.enabled else (),
        capacity=cfg.mod.capacity,
        exit_blocks=tuple(cfg.early_exit.blocks) if cfg.early_exit.enabled else (),
        n_mtp=cfg.patches.primary - 1 if cfg.patches.multi_token_predict else 0,
        cascade=cfg.cascade.enabled, bytes_per_step=t.batch_size * t.seq_len,
        target_bpb=max(1.1, 2.6 - 0.25 * math.log2(size / 512)), bytes_per_sec=bytes_per_sec)


@dataclass
class SimOptions:
    live: bool = False
    rate: float = 20.0                   # steps per second in live mode
    crash_at: int | None = None       # raise a simulated crash at this step
    stall_at: int | None = None       # stop heartbeats (and hang) at this step
    echo: bool = False


def save_checkpoint(path: Path, step: int, elapsed_s: float, cfg: Config) -> None:
    import torch  # only here: the rest of the simulator stays torch-free and quick to start
    obj = {"format": SIM_FORMAT, "simulated": True, "step": step, "elapsed_s": elapsed_s,
           "config_yaml": dumps(cfg)}
    atomic_write(path, lambda fh: torch.save(obj, fh))


def load_checkpoint(path: Path) -> dict:
    import torch
    try:
        obj = torch.load(path, map_location="cpu", weights_only=True)
    except FileNotFoundError:
        raise SimulationError(f"checkpoint {path} does not exist") from None
    except Exception as exc:  # torch raises many types for damaged files
        raise SimulationError(f"checkpoint {path} is unreadable: {exc}") from None
    if not isinstance(obj, dict) or obj.get("format") != SIM_FORMAT:
        raise SimulationError(f"{path} is not a simulated checkpoint; resume it with bin.train")
    return obj


class Simulator:
    def __init__(self, run: RunDir, cfg: Config, opts: SimOptions):
        self.run, self.cfg, self.opts = run, cfg, opts
        t = cfg.training
        self.total = t.steps
        self.shape = shape_of(cfg, opts.rate * t.batch_size * t.seq_len if opts.live else None)

    def run_all(self, resume: Path | None = None) -> RunState:
        """Simulate up to training.steps; returns the final state (completed or stopped)."""
        start_step, elapsed0 = 0, 0.0
        if resume is not None:
            ck = load_checkpoint(resume)
            start_step, elapsed0 = int(ck["step"]), float(ck["elapsed_s"])
        rec = RunRecorder(self.run, self.cfg, self.total, kind="simulate",
                          echo=self.opts.echo)
        try:
            rec.start(resume_step=start_step if resume is not None else None)
            with StopFlag() as stop:
                state, step = self._loop(rec, stop, start_step, elapsed0)
            if state is RunState.STOPPED:
                message = f"stopped by signal {stop.signal}; checkpoint at step {step}"
            else:
                message = f"{self.total} steps"
            rec.finish(state, message, exit_code=0)
            return state
        except BaseException as exc:
            code = 130 if isinstance(exc, KeyboardInterrupt) else 1
            rec.finish(RunState.CRASHED, f"{type(exc).__name__}: {exc}", exit_code=code)
            raise

    # -- the step loop -----------------------------------------------------------------------
    def _elapsed(self, step: int, t0: float, elapsed0: float) -> float:
        if self.opts.live:
            return elapsed0 + time.monotonic() - t0
        return step * self.shape.bytes_per_step / self.shape.bytes_per_sec

    def _loop(self, rec: RunRecorder, stop: StopFlag, start: int, elapsed0: float):
        o, lg = self.opts, self.cfg.logging
        t0 = time.monotonic()
        step = start
        while step < self.total:
            if o.stall_at is not None and step + 1 >= o.stall_at:
                self._stall(rec, stop)
            if stop.signal is not None:
                self._checkpoint(rec, step, self._elapsed(step, t0, elapsed0))
                return RunState.STOPPED, step
            step += 1
            if o.crash_at is not None and step >= o.crash_at:
                raise SimulationError(f"simulated crash at step {step}")
            last = step == self.total
            elapsed = self._elapsed(step, t0, elapsed0)
            val = self._eval(rec, step) if step % lg.eval_every == 0 or last else None
            if step % lg.log_every == 0 or last:
                self._log(rec, step, elapsed, val)
            if step % lg.save_every == 0 or last:
                self._checkpoint(rec, step, elapsed)
            if last:
                self._compression_jobs(rec, step)
            rec.heartbeat(step)
            if o.live:
                delay = t0 + (step - start) / o.rate - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
        return RunState.COMPLETED, step

    def _stall(self, rec: RunRecorder, stop: StopFlag) -> None:
        """Hang without heartbeats (a frozen trainer) until signalled."""
        rec.pause_heartbeat()
        while stop.signal is None:
            time.sleep(0.05)
        rec.pause_heartbeat(False)

    def _log(self, rec: RunRecorder, step: int, elapsed: float, val_loss: float | None):
        s, cfg = self.shape, self.cfg
        bpb = curves.train_bpb(s, step)
        heads = curves.head_bpbs(s, step, bpb)
        load, bias = curves.routing(s, step)
        frac, frac_inf = curves.mod_fractions(s, step)
        mult = lr_multiplier(step - 1, s.total_steps, cfg.training.warmup_steps,
                             cfg.training.cosine_schedule)
        rec.record_step(StepRecord(
            step=step, loss=bpb * LN2, bpb=bpb, lr=cfg.optimizer.adamw.lr * mult,
            grad_norm=curves.grad_norm(s, step), tokens_per_sec=curves.tokens_per_sec(s, step),
            bytes_seen=step * s.bytes_per_step, elapsed_s=elapsed,
            head_losses={k: v * LN2 for k, v in heads.items()},
            moe_blocks=s.moe_blocks, moe_load=load.tolist(), moe_bias=bias.tolist(),
            mod_fraction=frac, mod_capacity=s.capacity, mod_fraction_inference=frac_inf,
        ), val_loss=val_loss)
        with rec.db.batch():
            for b in range(s.n_blocks):
                rec.db.insert_activation_stat(step, b, **curves.activation_stats(s, step, b))
            if step % (5 * cfg.logging.log_every) == 0:
                for b in range(s.n_blocks):
                    rec.db.insert_hidden_states(step, b, curves.hidden_points(s, step, b))

    def _eval(self, rec: RunRecorder, step: int) -> float:
        bpb = curves.val_bpb(self.shape, step)
        rec.record_val(step, bpb * LN2, bpb, EVAL_BYTES)
        coded = bpb + 0.015  # what the coder adds over the model's cross-entropy
        rec.db.insert_eval_result(step, EVAL_DATASET, bpb=coded,
                                  compressed_bytes=int(coded * EVAL_BYTES / 8),
                                  original_bytes=EVAL_BYTES, roundtrip_ok=True)
        return bpb * LN2

    def _checkpoint(self, rec: RunRecorder, step: int, elapsed: float) -> None:
        path = self.run.checkpoint_path(step)
        save_checkpoint(path, step, elapsed, self.cfg)
        rec.record_checkpoint(step, path)

    def _compression_jobs(self, rec: RunRecorder, step: int) -> None:
        bpb = curves.val_bpb(self.shape, step)
        ckpt = str(self.run.checkpoint_path(step))
        for i, profile in enumerate(PROFILES):  # slower profiles squeeze a little more
            coded = bpb + 0.06 - 0.03 * i
            job = rec.db.start_compression_job("simulated/sample-1MiB.txt",
                                               f"simulated/sample-1MiB.{profile}.umc", profile, ckpt)
            rec.db.finish_compression_job(job, "simulated", raw_bytes=EVAL_BYTES,
                                          compressed_bytes=int(coded * EVAL_BYTES / 8),
                                          elapsed_s=EVAL_BYTES / (30_000.0 / (1 + 2 * i)))
