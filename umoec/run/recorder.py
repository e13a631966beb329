"""RunRecorder: everything a training process writes into its run folder, behind one object.

The trainer and the simulator both emit the same events (start, step, eval, checkpoint, finish);
the recorder turns each into metrics.db rows, log.csv and training.log lines and the status.json
heartbeat, so the cockpit cannot tell a real run's layout from a simulated one's. The heartbeat
runs on its own thread, so a step of any length never looks like a stall (status.py).
"""
from __future__ import annotations

import os
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ..config import Config, dumps
from ..metrics import TextLog, TrainingDB
from ..metrics.system import GpuProbe, SystemSampler
from .atomic import atomic_write_text
from .csvlog import CsvLog
from .layout import RunDir
from .status import RunState, RunStatus, own_process_start

HEARTBEAT_S = 2.0
BUSY_CPU_S = 0.02     # CPU seconds between two beats that count as working


@dataclass
class StepRecord:
    """One logged training step (losses in nats per byte; bpb = loss / ln 2)."""

    step: int
    loss: float
    bpb: float
    lr: float
    grad_norm: float
    tokens_per_sec: float
    bytes_seen: int
    elapsed_s: float
    head_losses: Mapping[str, float] = field(default_factory=dict)
    moe_blocks: Sequence[int] = ()                   # block index of each routing row
    moe_load: Sequence[Sequence[float]] = ()         # (n_moe_blocks, n_routed)
    moe_bias: Sequence[Sequence[float]] = ()         # (n_moe_blocks, n_routed)
    mod_fraction: Mapping[int, float] = field(default_factory=dict)   # block -> fraction
    mod_capacity: float = 0.0
    mod_fraction_inference: Mapping[int, float] = field(default_factory=dict)


class RunRecorder:
    """Open a run folder for writing; `kind` is "train" or "simulate"."""

    def __init__(self, run: RunDir, cfg: Config, total_steps: int, kind: str = "train",
                 echo: bool = False):
        self.run, self.cfg, self.total_steps, self.kind = run, cfg, total_steps, kind
        run.root.mkdir(parents=True, exist_ok=True)
        run.checkpoints_dir.mkdir(exist_ok=True)
        self.db = TrainingDB(run.db_path)
        self.system = SystemSampler(run.root)
        self.csv = CsvLog(run.csv_path)
        self.log = TextLog(run.log_path, echo=echo)
        self.step = 0
        self._last_beat = 0.0
        self._status = RunStatus(state=RunState.RUNNING.value, pid=os.getpid(),
                                 total_steps=total_steps, kind=kind,
                                 proc_start=own_process_start())
        self._lock = threading.Lock()        # one writer of status.json at a time
        self._stop = threading.Event()
        self._paused = False
        self._cpu = time.process_time()
        self._beater: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------------------
    def start(self, resume_step: int | None = None, note: str = "") -> None:
        """Freeze the config (fresh runs), mark running, and log the start or resume."""
        if resume_step is None:
            header = f"Frozen config of run {self.run.name} ({self.kind}), written at start."
            atomic_write_text(self.run.config_path, dumps(self.cfg, header))
            kind, text = "start", (f"{self.kind} {self.run.name}: {self.total_steps} steps, "
                                   f"{self.cfg.training.batch_size}x{self.cfg.training.seq_len} "
                                   f"bytes/step, tier={self.cfg.tier}")
        else:
            self.run.remove_stale_temp_files()  # left by a process killed mid-write
            self.step = resume_step
            kind, text = "resume", f"resumed {self.run.name} from step {resume_step}"
        if note:
            text += f" ({note})"
        self.log.line(text)
        # One transaction: a process killed between the two would leave the newer rows gone
        # with no resume event saying why (the run's history would skip a resume).
        with self.db.batch():
            if resume_step is not None:
                self.db.discard_after(resume_step)
            self.db.insert_event(kind, text, step=self.step)
        self.heartbeat(self.step, force=True)
        if self._beater is None:
            self._beater = threading.Thread(target=self._beat, name="heartbeat", daemon=True)
            self._beater.start()

    def heartbeat(self, step: int, force: bool = False) -> None:
        """Note the current step; write status.json now if forced or the step advanced and the
        last write is HEARTBEAT_S old (the thread writes it every HEARTBEAT_S anyway)."""
        with self._lock:
            now = time.time()
            if step != self._status.step or self._status.step_at is None:
                self._status.step_at = now
            self.step = self._status.step = step
            if force or now - self._last_beat >= HEARTBEAT_S:
                self._write(now)

    def watch_gpu(self, probe: GpuProbe) -> None:
        """Sample GPU use and memory with each logged step (the trainer, on CUDA)."""
        self.system.gpu = probe

    def pause_heartbeat(self, paused: bool = True) -> None:
        """Stop (or restart) the heartbeat thread's writes: the simulator's frozen process."""
        self._paused = paused

    def _beat(self) -> None:
        while not self._stop.wait(HEARTBEAT_S):
            if self._paused:
                continue
            with self._lock:
                if self._stop.is_set():
                    return
                try:
                    self._write(time.time())
                except OSError:
                    pass  # a full disk for a moment: the next beat tries again

    def _write(self, now: float) -> None:
        cpu = time.process_time()
        if cpu - self._cpu >= BUSY_CPU_S or self._status.busy_at is None:
            self._status.busy_at = now
        self._cpu = cpu
        self._status.updated_at = now
        self.run.write_status(self._status)
        self._last_beat = now

    def finish(self, state: RunState, message: str = "", exit_code: int | None = None) -> None:
        """Write the final status (completed | stopped | crashed) and close every file."""
        self._stop.set()
        with self._lock:  # no beat after the final status
            self._status.state, self._status.message = state.value, message
            self._status.exit_code, self._status.step = exit_code, self.step
            self._status.updated_at = time.time()
        text = f"{state.value} at step {self.step}" + (f": {message}" if message else "")
        try:
            self.log.line(text)
            self.db.insert_event({"completed": "done"}.get(state.value, state.value), text,
                                 step=self.step)
        finally:
            with self._lock:
                self.run.write_status(self._status)
            self.close()

    def close(self) -> None:
        self._stop.set()
        self.db.close()
        self.csv.close()
        self.log.close()

    # -- events ------------------------------------------------------------------------------
    def record_step(self, r: StepRecord, val_loss: float | None = None) -> None:
        with self.db.batch():
            self.db.insert_train_metrics(r.step, loss=r.loss, bpb=r.bpb, lr=r.lr,
                                         grad_norm=r.grad_norm, tokens_per_sec=r.tokens_per_sec,
                                         bytes_seen=r.bytes_seen, elapsed_s=r.elapsed_s)
            if r.head_losses:
                self.db.insert_head_losses(r.step, r.head_losses)
            if r.moe_blocks:
                self.db.insert_routing(r.step, r.moe_load, r.moe_bias, r.moe_blocks)
            if r.mod_fraction:
                self.db.insert_mod_gates(r.step, r.mod_fraction, r.mod_capacity,
                                         r.mod_fraction_inference)
            self.db.insert_system_metrics(r.step, **self.system.sample())
        self.csv.write(r.step, r.loss, r.lr, r.grad_norm, r.tokens_per_sec, r.elapsed_s, val_loss)
        self.log.step(r.step, r.loss, r.lr, r.grad_norm, r.tokens_per_sec, val_loss)
        self.heartbeat(r.step)

    def record_val(self, step: int, loss: float, bpb: float, n_bytes: int) -> None:
        self.db.insert_val(step, loss=loss, bpb=bpb, n_bytes=n_bytes)
        self.log.line(f"eval step {step}: val loss {loss:.4f} nats/byte, {bpb:.4f} bpb "
                      f"on {n_bytes} bytes")

    def record_hidden_stats(self, step: int, blocks: list[tuple[dict, list]]) -> None:
        """Per block, its activation statistics and hidden-state PCA points (one transaction)."""
        with self.db.batch():
            for b, (stats, points) in enumerate(blocks):
                self.db.insert_activation_stat(step, b, **stats)
                self.db.insert_hidden_states(step, b, points)

    def record_event(self, kind: str, text: str, step: int) -> None:
        """A line in training.log and a row in the events table (e.g. a thread-count change)."""
        self.log.line(text)
        self.db.insert_event(kind, text, step=step)

    def record_checkpoint(self, step: int, path: os.PathLike) -> None:
        self.log.line(f"checkpoint saved: {path}")
        self.db.insert_event("checkpoint", str(path), step=step)
        self.heartbeat(step, force=True)
