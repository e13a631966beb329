"""The Generate tab's model work: sample bytes from a checkpoint, and score text byte by byte.

Imports torch, so the cockpit imports this module only when a job starts (gui/callbacks/
generate_callbacks.py), never at start-up.

Both use the model's step form exactly as the codec does (umoec/compress/neural.py builds the
model; `state = model.init_state(1, g)`, `logits, state = model.step(prev_byte, state)`, the first
step fed BOS = 0):
- `sample`: the global vector g is computed from the prompt (the only text known before
  sampling); the prompt is fed byte by byte, then each next byte is drawn from
  softmax(logits / temperature) restricted to the top-k bytes with a seeded torch.Generator
  (temperature 0 = greedy). Same checkpoint + prompt + settings + seed = same bytes.
- `surprisal_bits`: -log2 p(byte | the bytes before it) for every byte of the text, with g over
  the whole text as the compressor stores it in the .umc header. Their sum is the ideal code
  length; the real coder adds only the rounding of probabilities to integer frequencies.

Jobs run in daemon threads (the supervisor's thread tasks, gui/services/supervisor.py) writing into
a server-side buffer; the page polls it (`Jobs`).
"""
from __future__ import annotations

import itertools
import math
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

import numpy as np
import torch

from umoec.codec.predictor import BOS
from umoec.compress.neural import LoadedModel, ModelLoadError, globals_for, load_model
from umoec.compress.profiles import Profile
from umoec.train.checkpoint import CheckpointError
from umoec.units import nats_to_bits

from .services.supervisor import Supervisor, ThreadTask

# The checkpoint's own early-exit and cascade settings, no online adaptation.
PLAYGROUND = Profile("playground", 1, None, None, False, 1,
                     "one stream, the checkpoint's inference settings, no LoRA adaptation")
MAX_SAMPLE_BYTES = 4096
MAX_PROMPT_BYTES = 4096
MAX_SCORE_BYTES = 8192
_CACHE_SIZE = 2


class PlaygroundError(RuntimeError):
    """The checkpoint cannot be used here, or the settings are invalid; the message says why."""


# -- models ----------------------------------------------------------------------------------------
_models: "OrderedDict[tuple, LoadedModel]" = OrderedDict()
_models_lock = threading.Lock()


def get_model(checkpoint: Path) -> LoadedModel:
    """The model of `checkpoint` (the last two are cached, keyed by path, size and mtime)."""
    checkpoint = Path(checkpoint)
    try:
        st = checkpoint.stat()
    except OSError:
        raise PlaygroundError(f"checkpoint {checkpoint} does not exist (deleted?)") from None
    key = (str(checkpoint.resolve()), st.st_size, st.st_mtime_ns)
    with _models_lock:
        if key in _models:
            _models.move_to_end(key)
            return _models[key]
        try:
            loaded = load_model(checkpoint, PLAYGROUND)
        except (CheckpointError, ModelLoadError) as exc:
            raise PlaygroundError(str(exc)) from None
        _models[key] = loaded
        while len(_models) > _CACHE_SIZE:
            _models.popitem(last=False)
        return loaded


def _init(loaded: LoadedModel, g: np.ndarray):
    gt = torch.from_numpy(np.asarray(g, dtype=np.float32)).unsqueeze(0)       # (1, G)
    return loaded.model.init_state(1, gt)


def _step(loaded: LoadedModel, byte: int, state):
    logits, state = loaded.model.step(torch.tensor([byte], dtype=torch.long), state)
    return logits[0].to(torch.float32), state                                    # (256,)


# -- sampling --------------------------------------------------------------------------------------
def check_sampling(temperature, top_k, max_bytes, seed) -> tuple[float, int, int, int]:
    try:
        t, k, n, s = float(temperature), int(top_k), int(max_bytes), int(seed)
    except (TypeError, ValueError):
        raise PlaygroundError("temperature, top-k, max bytes and seed must be numbers") from None
    if not (math.isfinite(t) and 0.0 <= t <= 5.0):
        raise PlaygroundError(f"temperature {t:g} must be between 0 (greedy) and 5")
    if not 0 <= k <= 256:
        raise PlaygroundError(f"top-k {k} must be between 0 (off) and 256")
    if not 1 <= n <= MAX_SAMPLE_BYTES:
        raise PlaygroundError(f"max bytes {n} must be between 1 and {MAX_SAMPLE_BYTES}")
    if not 0 <= s < 2 ** 63:
        raise PlaygroundError(f"seed {s} must be a non-negative integer")
    return t, k, n, s


def next_byte(logits: torch.Tensor, temperature: float, top_k: int,
              gen: torch.Generator) -> int:
    """Draw one byte from logits (256,): greedy at temperature 0, else top-k + temperature."""
    if temperature == 0.0:
        return int(torch.argmax(logits))
    scaled = logits / temperature
    if 0 < top_k < scaled.shape[0]:
        kth = torch.topk(scaled, top_k).values[-1]
        scaled = scaled.masked_fill(scaled < kth, float("-inf"))
    probs = torch.softmax(scaled, dim=-1)
    return int(torch.multinomial(probs, 1, generator=gen))


def sample(loaded: LoadedModel, prompt: bytes, *, max_bytes: int, temperature: float,
           top_k: int, seed: int, on_byte: Optional[Callable[[int], None]] = None,
           cancel: Optional[threading.Event] = None) -> bytes:
    """Up to max_bytes bytes continuing `prompt` (fewer if cancelled)."""
    temperature, top_k, max_bytes, seed = check_sampling(temperature, top_k, max_bytes, seed)
    gen = torch.Generator().manual_seed(seed)
    state = _init(loaded, globals_for(prompt, loaded.cfg))
    logits, state = _step(loaded, BOS, state)
    for b in prompt:
        if cancel is not None and cancel.is_set():
            return b""
        logits, state = _step(loaded, b, state)
    out = bytearray()
    while len(out) < max_bytes and not (cancel is not None and cancel.is_set()):
        b = next_byte(logits, temperature, top_k, gen)
        out.append(b)
        if on_byte is not None:
            on_byte(b)
        if len(out) < max_bytes:
            logits, state = _step(loaded, b, state)
    return bytes(out)


# -- surprisal -------------------------------------------------------------------------------------
def surprisal_bits(loaded: LoadedModel, text: bytes, *,
                   on_progress: Optional[Callable[[int], None]] = None,
                   cancel: Optional[threading.Event] = None) -> np.ndarray:
    """float64 (len(text),): -log2 p of each byte given the ones before it (the codec's view)."""
    state = _init(loaded, globals_for(text, loaded.cfg))
    bits = np.zeros(len(text), dtype=np.float64)
    prev = BOS
    for i, b in enumerate(text):
        if cancel is not None and cancel.is_set():
            return bits[:i]
        logits, state = _step(loaded, prev, state)
        bits[i] = nats_to_bits(-float(torch.log_softmax(logits.double(), dim=-1)[b]))
        prev = b
        if on_progress is not None and (i % 64 == 63 or i == len(text) - 1):
            on_progress(i + 1)
    return bits


# -- jobs ------------------------------------------------------------------------------------------
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
    bits: Optional[np.ndarray] = None
    progress: int = 0
    phase: str = "loading"     # loading | running | done | cancelled | failed
    error: str = ""
    started: float = field(default_factory=time.time)
    ended: Optional[float] = None
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


class Jobs:
    """The running and recent jobs of one cockpit (the oldest finished ones are dropped)."""

    def __init__(self, keep: int = 16, supervisor: Optional[Supervisor] = None):
        self.keep = keep
        self.supervisor = supervisor or Supervisor()
        self._lock = threading.Lock()
        self._jobs: "OrderedDict[str, Job]" = OrderedDict()
        self._ids = itertools.count(1)

    def get(self, job_id: Optional[str]) -> Optional[Job]:
        with self._lock:
            return self._jobs.get(job_id) if job_id else None

    def cancel(self, job_id: Optional[str]) -> bool:
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
        if len(prompt) > MAX_PROMPT_BYTES:
            raise PlaygroundError(f"the prompt has {len(prompt):,} bytes; the limit is "
                                  f"{MAX_PROMPT_BYTES:,}")
        settings = check_sampling(temperature, top_k, max_bytes, seed)
        job = self._add("sample", checkpoint, settings[2], prompt=prompt)

        def work(loaded: LoadedModel) -> None:
            def emit(b: int) -> None:
                with job.lock:
                    job.out.append(b)
                    job.progress = len(job.out)
            sample(loaded, prompt, temperature=settings[0], top_k=settings[1],
                   max_bytes=settings[2], seed=settings[3], on_byte=emit, cancel=job.cancel)
        self._run(job, work)
        return job

    def start_score(self, checkpoint: Path, text: bytes) -> Job:
        if not text:
            raise PlaygroundError("paste some text to score first")
        if len(text) > MAX_SCORE_BYTES:
            raise PlaygroundError(f"the text has {len(text):,} bytes; the limit is "
                                  f"{MAX_SCORE_BYTES:,} (the step form is one model call per byte)")
        job = self._add("score", checkpoint, len(text), text=text)

        def work(loaded: LoadedModel) -> None:
            def progress(n: int) -> None:
                with job.lock:
                    job.progress = n
            bits = surprisal_bits(loaded, text, on_progress=progress, cancel=job.cancel)
            with job.lock:
                job.bits = bits
        self._run(job, work)
        return job

    def _run(self, job: Job, work: Callable[[LoadedModel], None]) -> None:
        def target(_cancel: threading.Event) -> None:   # _cancel is job.cancel
            loaded = get_model(job.checkpoint)
            with job.lock:
                job.phase, job.step = "running", loaded.step
            work(loaded)

        def ended(task: ThreadTask) -> None:  # the page must say what happened, never hang
            error = "" if task.error is None else (
                str(task.error) if isinstance(task.error, PlaygroundError)
                else f"{type(task.error).__name__}: {task.error}")
            with job.lock:
                job.phase, job.error, job.ended = task.state, error, task.ended or time.time()

        task = self.supervisor.run_thread(target, name=f"playground-{job.id}", cancel=job.cancel)
        task.add_exit_callback(ended)


JOBS = Jobs()
