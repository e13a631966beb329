"""The training loop: data -> model -> loss -> Muon/AdamW step, emitting events to a RunRecorder.

One step: lr from the shared schedule, the batch for (seed, step), forward with every head's
loss, backward, gradient clipping, optimizer steps, then the MoE balancing-bias update. Every
log_every steps the recorder gets the losses, lr, grad norm, throughput, expert loads/biases and
MoD fractions; every eval_every the validation loss and the hidden-state statistics; every
save_every a checkpoint. SIGTERM/SIGINT (or --stop-at) finish the step, checkpoint and stop.
"""
from __future__ import annotations

import contextlib
import math
import time
from dataclasses import dataclass
from pathlib import Path

import torch

from .. import config as C
from ..data import ByteDataset
from ..metrics.system import torch_cuda_probe
from ..run.layout import RunDir
from ..run.recorder import RunRecorder, StepRecord
from ..run.signals import StopFlag
from ..run.status import RunState
from ..schedule import lr_multiplier
from ..units import nats_to_bits
from . import checkpoint as ckpt
from .distributed import Dist, LaunchError, setup
from .optim import build_optimizers, set_lr
from .preflight import FP8_REFUSAL
from .stats import activation_stats, pca_points
from .threads import ThreadGovernor, available_cpus


class TrainError(RuntimeError):
    """Training cannot start or continue; the message says why."""


@dataclass
class TrainOptions:
    stop_at: int | None = None      # behave as if SIGTERM arrived after this step
    time_budget_s: float | None = None  # ... or once this much wall time has passed
    echo: bool = True                  # print training.log lines
    eval_batches: int = 16             # validation: this many batches of batch_size x seq_len


def autocast_for(cfg: C.Config, device: torch.device):
    p = cfg.training.precision
    if p == "fp32":
        return contextlib.nullcontext()
    if p == "bf16+fp8":
        raise TrainError(FP8_REFUSAL)
    if device.type == "cuda" and not torch.cuda.is_bf16_supported():
        raise TrainError("training.precision=bf16 but this GPU has no bf16 support; use fp32")
    return torch.autocast(device_type=device.type, dtype=torch.bfloat16)


class Trainer:
    """One training run. `run_all` sets up the run's objects on self (process group, data,
    autocast, model and its step wrapper, optimizers, recorder on rank 0, stop flag); the loop
    and its events read them from there."""

    dist: Dist
    data: ByteDataset
    amp: contextlib.AbstractContextManager
    model: torch.nn.Module
    step_model: torch.nn.Module            # the model wrapped for steps (DDP, torch.compile)
    optimizers: list
    rec: RunRecorder | None = None      # rank 0 only
    stop: StopFlag

    def __init__(self, cfg: C.Config, run: RunDir, opts: TrainOptions,
                 resume: Path | None = None):
        self.cfg, self.run, self.opts, self.resume = cfg, run, opts, resume

    # -- setup ---------------------------------------------------------------------------------
    def _build(self):
        from ..model import build_model  # the model imports torch-heavy modules; keep it here
        cfg = self.cfg
        start = {"step": 0, "bytes_seen": 0, "elapsed_s": 0.0}
        state = None
        if self.resume is not None:
            state = ckpt.load(self.resume)
            diffs = ckpt.arch_differences(cfg, ckpt.checkpoint_config(state, str(self.resume)))
            if diffs:
                raise TrainError(f"checkpoint {self.resume} was trained with a different network: "
                                 + "; ".join(diffs[:5]) + (" ..." if len(diffs) > 5 else ""))
            if state["step"] >= cfg.training.steps:
                raise TrainError(f"checkpoint {self.resume} is at step {state['step']}, already "
                                 f">= training.steps={cfg.training.steps}; raise training.steps "
                                 "to train further")
            start = {k: state[k] for k in start}
            start["pending_eval"] = state.get("pending_eval")
        torch.manual_seed(cfg.data.seed)
        model = build_model(cfg).to(self.dist.device)
        optimizers = build_optimizers(model, cfg)
        if state is not None:
            model.load_state_dict(state["model"])
            if len(state["optimizers"]) != len(optimizers):
                raise TrainError(f"checkpoint {self.resume} has {len(state['optimizers'])} "
                                 f"optimizer states, this model needs {len(optimizers)}")
            for opt, sd in zip(optimizers, state["optimizers"], strict=True):
                opt.load_state_dict(sd)
            torch.set_rng_state(state["torch_rng"])
        return model, optimizers, start

    # -- the loop ------------------------------------------------------------------------------
    def run_all(self) -> RunState:
        cfg = self.cfg
        try:
            self.dist = dist = setup(cfg)
        except LaunchError as exc:
            raise TrainError(str(exc)) from None
        rec = self.rec = None
        try:
            self.threads = ThreadGovernor(cfg.hardware.threads,
                                          cpus=max(1, available_cpus() // dist.local_world))
            torch.set_num_threads(self.threads.start())
            self.data = ByteDataset(cfg.data.path, cfg.head.d_globals)
            self.amp = autocast_for(cfg, dist.device)
            model, self.optimizers, start = self._build()
            self.model = step_model = model
            if dist.ddp:
                step_model = torch.nn.parallel.DistributedDataParallel(
                    model, find_unused_parameters=True)
            if cfg.hardware.compile:
                step_model = torch.compile(step_model)
            self.step_model = step_model
            if dist.main:
                rec = self.rec = RunRecorder(self.run, cfg, cfg.training.steps, kind="train",
                                  echo=self.opts.echo)
                if dist.device.type == "cuda":
                    rec.watch_gpu(torch_cuda_probe(dist.device))
                if self.resume is not None:
                    C.save(cfg, self.run.config_path, f"Config of run {self.run.name}, resumed "
                           f"from {self.resume} at step {start['step']}.")
                n_params = sum(p.numel() for p in model.parameters())
                rec.start(resume_step=start["step"] if self.resume is not None else None,
                          note=f"{n_params:,} parameters, {dist.world} process(es) on "
                               f"{dist.device.type}, precision {cfg.training.precision}, "
                               f"{self.threads.describe()}")
            with StopFlag() as stop:
                self.stop = stop
                state, step = self._loop(start)
            if rec is not None:
                if state is RunState.STOPPED:
                    why = (f"signal {stop.signal}" if stop.signal else
                           f"--stop-at {self.opts.stop_at}" if self.opts.stop_at is not None
                           else f"--time-budget {self.opts.time_budget_s:g} s")
                    rec.finish(state, f"stopped by {why}; checkpoint at step {step}", exit_code=0)
                else:
                    rec.finish(state, f"{step} steps", exit_code=0)
            return state
        except BaseException as exc:
            if rec is not None:
                code = 130 if isinstance(exc, KeyboardInterrupt) else 1
                rec.finish(RunState.CRASHED, f"{type(exc).__name__}: {exc}", exit_code=code)
            raise
        finally:
            dist.close()

    def _loop(self, start: dict) -> tuple[RunState, int]:
        cfg, t = self.cfg, self.cfg.training
        dist, model, optimizers, rec, stop = (self.dist, self.model, self.optimizers, self.rec,
                                              self.stop)
        lg = cfg.logging
        params = [p for p in model.parameters() if p.requires_grad]
        bytes_per_step = t.batch_size * t.seq_len * dist.world
        step, bytes_seen = start["step"], start["bytes_seen"]
        t0, elapsed0 = time.monotonic(), start["elapsed_s"]
        window_t, window_steps = time.monotonic(), 0
        # An evaluation cut short by a stop request is owed: the resumed run does it first.
        pending = start.get("pending_eval")
        if pending is not None and pending == step:
            val = self._evaluate(step)
            pending = None if dist.all(val is not None or not dist.main) else step
        model.train()
        while step < t.steps:
            if dist.any(stop.signal is not None or self._budget_spent(step, t0)):
                self._save(step, bytes_seen, elapsed0 + time.monotonic() - t0, pending_eval=pending)
                return RunState.STOPPED, step
            step += 1
            lr = set_lr(optimizers, lr_multiplier(step - 1, t.steps, t.warmup_steps,
                                                  t.cosine_schedule))
            x, y, g = (torch.from_numpy(a).to(dist.device) for a in
                       self.data.batch(step, t.batch_size, t.seq_len, cfg.data.seed,
                                  cfg.data.pack_documents, dist.rank, dist.world))
            with self.amp:
                out = self.step_model(x, g, targets=y)
            out.loss.backward()
            grad_norm = torch.nn.utils.clip_grad_norm_(
                params, t.grad_clip if t.grad_clip > 0 else float("inf"))
            for opt in optimizers:
                opt.step()
                opt.zero_grad(set_to_none=True)
            for b in out.moe_load:  # every rank applies the same, averaged load
                out.moe_load[b] = dist.all_mean(out.moe_load[b].detach())
            model.update_balancing_bias(out)
            bytes_seen += bytes_per_step
            window_steps += 1
            if not math.isfinite(out.loss.item()):
                raise TrainError(f"loss became {out.loss.item()} at step {step}; lower the "
                                 "learning rates or raise training.grad_clip")
            last = step == t.steps
            is_eval = step % lg.eval_every == 0 or last
            val_loss = self._evaluate(step) if is_eval else None
            pending = step if is_eval and not dist.all(val_loss is not None or not dist.main) \
                else None
            if step % lg.log_every == 0 or last or is_eval:  # same decision on every rank
                now = time.monotonic()
                rate = window_steps * bytes_per_step / max(1e-9, now - window_t)
                window_t, window_steps = now, 0
                self._log(out, step, lr, grad_norm, rate, bytes_seen, elapsed0 + now - t0,
                          val_loss)
            if step % lg.save_every == 0 or last:
                self._save(step, bytes_seen, elapsed0 + time.monotonic() - t0)
            if rec is not None:
                rec.heartbeat(step)
            change = self.threads.poll()
            if change is not None:  # applied here: set_num_threads acts on the calling thread
                before = torch.get_num_threads()
                torch.set_num_threads(change.threads)
                if rec is not None:
                    rec.record_event("threads", change.text(before), step)
        return RunState.COMPLETED, step

    def _budget_spent(self, step: int, t0: float) -> bool:
        o = self.opts
        return ((o.stop_at is not None and step >= o.stop_at) or
                (o.time_budget_s is not None and time.monotonic() - t0 >= o.time_budget_s))

    # -- events --------------------------------------------------------------------------------
    def _log(self, out, step: int, lr: float, grad_norm, rate: float, bytes_seen: int,
             elapsed: float, val_loss: float | None) -> None:
        heads = {k: self.dist.all_mean(v.detach().float()).item()
                 for k, v in out.head_losses.items()}
        rec = self.rec
        if rec is None:
            return
        blocks = sorted(out.moe_load)
        final = heads["final"]
        rec.record_step(StepRecord(
            step=step, loss=final, bpb=nats_to_bits(final), lr=lr, grad_norm=float(grad_norm),
            tokens_per_sec=rate, bytes_seen=bytes_seen, elapsed_s=elapsed, head_losses=heads,
            moe_blocks=blocks, moe_load=[out.moe_load[b].tolist() for b in blocks],
            moe_bias=[out.moe_bias[b].detach().float().tolist() for b in blocks],
            mod_fraction=dict(out.mod_fraction), mod_capacity=self.cfg.mod.capacity,
            mod_fraction_inference=dict(out.mod_fraction_inference)), val_loss=val_loss)

    @torch.no_grad()
    def _evaluate(self, step: int) -> float | None:
        """Validation loss (rank 0, fixed batches) and hidden-state statistics of one batch.

        Heartbeats between batches; a stop request cuts the evaluation short (no val row)."""
        dist, model, rec, stop = self.dist, self.model, self.rec, self.stop
        if not dist.main:
            dist.barrier()
            return None
        t = self.cfg.training
        model.eval()
        total, count, first = 0.0, 0, True
        try:
            for x, y, g in self.data.val_batches(t.batch_size, t.seq_len,
                                            self.opts.eval_batches * t.batch_size * t.seq_len):
                if stop.signal is not None:
                    rec.log.line(f"eval step {step}: interrupted by signal {stop.signal}")
                    break
                rec.heartbeat(step)
                x, y, g = (torch.from_numpy(a).to(dist.device) for a in (x, y, g))
                with self.amp:
                    out = model(x, g, targets=y, return_hidden=first)
                n = int((y >= 0).sum())
                total += out.head_losses["final"].float().item() * n
                count += n
                if first:
                    rec.record_hidden_stats(step, [(activation_stats(h), pca_points(h).tolist())
                                                   for h in out.hidden])
                    first = False
            else:
                loss = total / max(1, count)
                rec.record_val(step, loss, nats_to_bits(loss), count)
                return loss
            return None
        finally:
            model.train()
            dist.barrier()

    def _save(self, step: int, bytes_seen: int, elapsed: float,
              pending_eval: int | None = None) -> None:
        dist, rec = self.dist, self.rec
        if dist.main:
            path = self.run.checkpoint_path(step)
            ckpt.save(path, model_state=self.model.state_dict(),
                      optimizer_states=[o.state_dict() for o in self.optimizers], step=step,
                      bytes_seen=bytes_seen, elapsed_s=elapsed, cfg=self.cfg,
                      world_size=dist.world, pending_eval=pending_eval)
            rec.record_checkpoint(step, path)
        dist.barrier()
