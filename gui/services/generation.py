"""The Generate tab's jobs: sampling and scoring (umoec/generate.py) in the supervisor's thread
tasks, writing into a server-side buffer the page polls. No Dash; torch only once a job starts. The
last two checkpoints' models stay loaded (keyed by path, size and mtime).
"""
from __future__ import annotations

import itertools
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .cache import SignatureCache
from .supervisor import Supervisor, ThreadTask

MODELS_KEPT = 2


@dataclass
class Job:
    """A sampling or scoring job; the page reads `view()` while the thread fills it."""

    id: str
    kind: str                  # sample | score
    checkpoint: Path
    total: int                 # bytes to produce (sample) or score
    prompt: bytes = b""
    text: bytes = b""
    out: bytearray = field(default_factory=bytearray)
    bits: np.ndarray | None = None
    progress: int = 0
    phase: str = "loading"     # loading | running | done | cancelled | failed
    error: str = ""
    started: float = field(default_factory=time.time)
    ended: float | None = None
    step: int = 0              # training step of the checkpoint
    cancel: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def finished(self) -> bool:
        return self.phase in ("done", "cancelled", "failed")

    def view(self) -> dict:
        """A consistent copy of what the page shows."""
        with self.lock:
            return {"id": self.id, "kind": self.kind, "phase": self.phase, "error": self.error,
                    "prompt": self.prompt, "out": bytes(self.out), "progress": self.progress,
                    "total": self.total, "step": self.step, "checkpoint": self.checkpoint,
                    "bits": None if self.bits is None else self.bits.copy(), "text": self.text,
                    "elapsed": (self.ended or time.time()) - self.started}


class Generation:
    """The running and recent jobs of one cockpit (the oldest finished ones are dropped) and
    the models they use."""

    def __init__(self, supervisor: Supervisor, keep: int = 16):
        self.keep = keep
        self.supervisor = supervisor
        self._lock = threading.Lock()
        self._jobs: OrderedDict[str, Job] = OrderedDict()
        self._ids = itertools.count(1)
        self._models = SignatureCache(MODELS_KEPT)

    # -- models ------------------------------------------------------------------------------------
    def model(self, checkpoint: Path):
        """The loaded model of `checkpoint` (umoec.generate.load), from the cache when unchanged."""
        from umoec import generate
        checkpoint = Path(checkpoint)
        try:
            st = checkpoint.stat()
        except OSError:
            raise generate.GenerateError(f"checkpoint {checkpoint} does not exist (deleted?)") from None
        return self._models.get(str(checkpoint.resolve()), (st.st_size, st.st_mtime_ns),
                                lambda _stale: generate.load(checkpoint))

    # -- jobs --------------------------------------------------------------------------------------
    def get(self, job_id: str | None) -> Job | None:
        with self._lock:
            return self._jobs.get(job_id) if job_id else None

    def cancel(self, job_id: str | None) -> bool:
        job = self.get(job_id)
        if job is None or job.finished:
            return False
        job.cancel.set()
        return True

    def _add(self, kind: str, checkpoint: Path, total: int, **kw) -> Job:
        with self._lock:
            job = Job(f"{kind}-{next(self._ids)}", kind, Path(checkpoint), total, **kw)
            self._jobs[job.id] = job
            finished = [k for k, j in self._jobs.items() if j.finished]
            for k in finished[:max(0, len(self._jobs) - self.keep)]:
                del self._jobs[k]
        return job

    def start_sample(self, checkpoint: Path, prompt: bytes, *, temperature, top_k, max_bytes,
                     seed) -> Job:
        """A job sampling up to max_bytes after `prompt` (GenerateError: refused settings)."""
        from umoec import generate
        if len(prompt) > generate.MAX_PROMPT_BYTES:
            raise generate.GenerateError(f"the prompt has {len(prompt):,} bytes; the limit is "
                                         f"{generate.MAX_PROMPT_BYTES:,}")
        settings = generate.check_sampling(temperature, top_k, max_bytes, seed)
        job = self._add("sample", checkpoint, settings[2], prompt=prompt)

        def work(loaded) -> None:
            def emit(b: int) -> None:
                with job.lock:
                    job.out.append(b)
                    job.progress = len(job.out)
            generate.sample(loaded, prompt, temperature=settings[0], top_k=settings[1],
                            max_bytes=settings[2], seed=settings[3], on_byte=emit,
                            cancel=job.cancel)
        self._run(job, work)
        return job

    def start_score(self, checkpoint: Path, text: bytes) -> Job:
        """A job scoring every byte of `text` (GenerateError: empty or too long)."""
        from umoec import generate
        if not text:
            raise generate.GenerateError("paste some text to score first")
        if len(text) > generate.MAX_SCORE_BYTES:
            raise generate.GenerateError(
                f"the text has {len(text):,} bytes; the limit is {generate.MAX_SCORE_BYTES:,} "
                "(the step form is one model call per byte)")
        job = self._add("score", checkpoint, len(text), text=text)

        def work(loaded) -> None:
            def progress(n: int) -> None:
                with job.lock:
                    job.progress = n
            bits = generate.surprisal_bits(loaded, text, on_progress=progress, cancel=job.cancel)
            with job.lock:
                job.bits = bits
        self._run(job, work)
        return job

    def _run(self, job: Job, work: Callable[[Any], None]) -> None:
        from umoec.generate import GenerateError

        def target(_cancel: threading.Event) -> None:   # _cancel is job.cancel
            loaded = self.model(job.checkpoint)
            with job.lock:
                job.phase, job.step = "running", loaded.step
            work(loaded)

        def ended(task: ThreadTask) -> None:  # the page must say what happened, never hang
            error = "" if task.error is None else (
                str(task.error) if isinstance(task.error, GenerateError)
                else f"{type(task.error).__name__}: {task.error}")
            with job.lock:
                job.phase, job.error, job.ended = task.state, error, task.ended or time.time()

        task = self.supervisor.run_thread(target, name=f"generate-{job.id}", cancel=job.cancel)
        task.add_exit_callback(ended)
