"""The exact engine's streams split over processes: each step of a coding, a forked child process
computes the logits of a slice of the streams while this process computes the rest, then hands
its own slice to the coder (step_parts), which codes it while the children still compute.

Why processes, not threads: between its compiled kernels a step runs Python, and the GIL
serialised two threads' halves (a split over Python threads was slower: docs/compress.md). Why
it changes no bit: all but the online adaptation is each stream's own (each row is quantised on
its own, products are exact, the cascade's tables and the SSM/conv state are per stream, MoE
padding rows are dropped), so a slice of the streams run by another ExactModel state gives the
very integers of the whole batch (`ExactModel.core`); the adaptation, whose weights all streams
share, runs here on every stream's rows (`ExactModel.correct` slice by slice; it learns from
all of them). tests/umoec/engine/test_split.py checks it with and without adaptation. The
mixing stage after the network codes stream after stream, so it codes this process's slice (the
first streams) before the children's results arrive; this process takes fewer streams (LEAD)
since it also codes them all. The encoder knows every byte: it tells the split the next step's
bytes (`foresee`), so the children compute that step while this process codes their slices of
the one before (two slots of each in the mapping), and they take more of the streams there
(LEAD_FORESEEN); a decoder cannot, and its children wait for each step's bytes.

The child is forked (copy-on-write: the model is not loaded again) when coding starts and exits
when its pipe closes (the coding ended, or this process died). The bytes and logits go through
an anonymous shared mapping, nothing is pickled. Each side says "go" / "done" by a counter in
the mapping, on which the other side spins for up to SPIN_S (a sleeping vCPU took 0.1-0.4 ms to
wake at every step). A side that stops spinning raises its flag in the mapping and sleeps on the
pipe; a side that stores a counter and then reads that flag raised sends a message too (so a
step of two spinning sides makes no system call: they cost ~0.05 ms a step on each side). The
pipe also carries a failure report, and its end tells of a dead process. A message that came
late is skipped by the next sleep.
"""
from __future__ import annotations

import mmap
import multiprocessing
import os
import signal
import traceback
import weakref

import numpy as np

from ..sizing import VOCAB
from . import kernels

MIN_ROWS = 32       # streams per process at least (UMOEC_SPLIT_MIN_ROWS): a step's fixed costs
                    # (~0.5 ms of Python and calls) are paid in every process
LEAD = 0.75         # the coding process's share of the streams against a child's
                    # (UMOEC_SPLIT_LEAD): it also codes every slice (docs/compress.md)
LEAD_FORESEEN = 0.5  # the same for an encoder (UMOEC_SPLIT_LEAD_FORESEEN): its children
                    # compute the next step while it codes, so they can take more
SPIN_S = 0.005      # how long a waiting process spins before it sleeps on the pipe (a step is
                    # ~2-4 ms; the child waits ~0.5-1 ms of each for the coding process's codec)
_GO, _DONE, _FAIL = b"s", b"k", b"E"
_GO_AT, _DONE_AT = 0, 1   # the counters' places in the shared mapping, and the flags of a
_CHILD_SLEEPS, _PARENT_SLEEPS = 2, 3   # side asleep on its pipe
_started = 0        # child processes this process has started (reports, tests)


def started() -> int:
    return _started


def can_fork() -> bool:
    """Whether this process may fork engine children: the OS has fork, and this is not a
    daemonic multiprocessing worker (those may not have children)."""
    return ("fork" in multiprocessing.get_all_start_methods()
            and not multiprocessing.current_process().daemon)


def parts_for(streams: int, threads: int) -> int:
    """How many processes share the streams: one per thread the plan allows, each with at least
    MIN_ROWS streams; 1 where processes cannot be forked."""
    if threads < 2 or not can_fork():
        return 1
    try:
        least = max(1, int(os.environ.get("UMOEC_SPLIT_MIN_ROWS", MIN_ROWS)))
    except ValueError:
        least = MIN_ROWS
    return max(1, min(threads, streams // least))


def _lead(foreseen: bool = False) -> float:
    name, default = (("UMOEC_SPLIT_LEAD_FORESEEN", LEAD_FORESEEN) if foreseen
                     else ("UMOEC_SPLIT_LEAD", LEAD))
    try:
        lead = float(os.environ.get(name, default))
    except ValueError:
        return default
    return lead if 0.05 <= lead <= 20 else default


def bounds(streams: int, parts: int, lead: float = 1.0) -> list[tuple[int, int]]:
    """Contiguous slices of the streams: the first (this process's) `lead` times as many as each
    of the others, which are as even as they go (the first ones one longer); every slice holds
    one stream at least."""
    first = min(streams - (parts - 1), max(1, round(streams * lead / (lead + parts - 1))))
    q, r = divmod(streams - first, parts - 1) if parts > 1 else (0, 0)
    out, lo = [(0, first)], first
    for i in range(parts - 1):
        hi = lo + q + (i < r)
        out.append((lo, hi))
        lo = hi
    return out


class EngineError(RuntimeError):
    """A child process of the engine failed: a bug or a killed process, never the file's fault."""


class _Shared:
    """One child's slice in an anonymous shared mapping (MAP_SHARED: after the fork both
    processes see the same pages): its bytes in, core's results out, two of each (a step's
    slot is its count's parity), so the child can compute the step after the one whose results
    this process still codes (`Split.foresee`)."""

    def __init__(self, n: int, width: int):
        sizes = [32, 16 * n, 16 * n * VOCAB, 16 * n, 8 * n * width]
        self.buf = mmap.mmap(-1, sum(sizes))
        at = np.cumsum([0, *sizes]).tolist()
        view = lambda dtype, k, shape: np.frombuffer(  # noqa: E731
            self.buf, dtype=dtype, count=int(np.prod(shape)), offset=at[k]).reshape(shape)
        self.counters = view(np.int64, 0, (4,))  # steps said "go" and "done", sleepers' flags
        self.byte = view(np.int64, 1, (2, n))
        self.raw = view(np.int64, 2, (2, n, VOCAB))
        self.final = view(np.int64, 3, (2, n))
        self.x8 = view(np.float32, 4, (2, n, width))


def _await(io: _Shared, at: int, target: int, conn, flag: int) -> bytes | None:
    """Until the other process has counted `target` at `at`: a spin of up to SPIN_S, then sleep
    on the pipe with this side's `flag` raised. None when reached, else the failure report that
    came instead. EOFError or OSError when the pipe closed."""
    if kernels.seq_wait(io.counters, at, target, SPIN_S):
        return None                           # the other side saw no flag: it sent nothing
    while True:
        if kernels.seq_sleep(io.counters, flag, at, target):
            while conn.poll():                # messages that came late
                msg = conn.recv_bytes()
                if msg[:1] == _FAIL:
                    return msg
            return None
        msg = conn.recv_bytes()
        if msg[:1] == _FAIL:
            return msg


def _serve(engine, g, n: int, conn, others, io: _Shared) -> None:
    """The child: its own state for n streams, one step per message until the pipe closes."""
    for c in others:                          # the parent's ends: EOF must reach us when it dies
        c.close()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle; we end on EOF
    engine.set_threads(1)
    _one_blas_thread()                        # see Split
    try:
        st = engine.init_state(n, g)
        step = 0
        while True:
            try:
                _await(io, _GO_AT, step + 1, conn, _CHILD_SLEEPS)   # the parent reports no failure
            except (EOFError, OSError):
                break
            step += 1
            slot = step & 1
            raw, final, x8 = engine.core(io.byte[slot].copy(), st)
            io.raw[slot] = raw
            io.final[slot] = final
            if x8 is not None:
                io.x8[slot] = x8
            if kernels.seq_publish(io.counters, _DONE_AT, step, _PARENT_SLEEPS):
                conn.send_bytes(_DONE)
    except BaseException:                     # told to the parent, then gone
        try:
            conn.send_bytes(_FAIL + traceback.format_exc().encode("utf-8", "replace"))
        except OSError:
            pass
    finally:
        os._exit(0)


class _Child:
    def __init__(self, engine, g, n: int, others: list):
        self.io = _Shared(n, engine.d.d_model)
        self.sent = 0                         # steps this side said "go" for
        self.taken = 0                        # steps whose results it has read
        ctx = multiprocessing.get_context("fork")
        self.conn, child_end = ctx.Pipe(duplex=True)
        self.proc = ctx.Process(target=_serve, daemon=True, name="umoec-engine",
                                args=(engine, g, n, child_end, [self.conn, *others], self.io))
        self.proc.start()
        child_end.close()
        global _started
        _started += 1

    def go(self, byte: np.ndarray) -> None:
        """The bytes of the next step not yet said "go" for (at most two steps past the results
        read: the slots)."""
        self.sent += 1
        self.io.byte[self.sent & 1] = byte
        if kernels.seq_publish(self.io.counters, _GO_AT, self.sent, _CHILD_SLEEPS):
            try:
                self.conn.send_bytes(_GO)
            except OSError:
                raise self._died() from None

    def result(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(raw, final, x8) of the oldest step said "go" for and not read yet: views of its slot,
        valid until the step after next is said "go" for."""
        self.taken += 1
        try:
            msg = _await(self.io, _DONE_AT, self.taken, self.conn, _PARENT_SLEEPS)
        except (EOFError, OSError):
            raise self._died() from None
        if msg is not None:
            detail = msg[1:].decode("utf-8", "replace").strip().splitlines()
            raise EngineError("the engine's second process failed (a bug, not damage): "
                              + (detail[-1] if detail else "no detail"))
        slot = self.taken & 1
        return self.io.raw[slot], self.io.final[slot], self.io.x8[slot]

    def _died(self) -> EngineError:
        self.proc.join(1.0)
        return EngineError(f"the engine's second process ended (exit code {self.proc.exitcode}) "
                           "in the middle of a coding (a killed process or a bug, not damage)")

    def close(self) -> None:
        self.conn.close()
        self.proc.join(5.0)
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join(1.0)


def _one_blas_thread():
    """Limit this process's BLAS to one thread; -> what restores the count it had."""
    from threadpoolctl import threadpool_limits  # only where a split starts (~10 ms)
    return threadpool_limits(1, user_api="blas")


def _close_all(children: list, blas=None) -> None:
    for c in children:
        c.close()
    if blas is not None:
        blas.restore_original_limits()


class Split:
    """Steps of `engine` over B streams, the first slice here, the others in child processes.

    Each process runs one BLAS thread while the split lives (restored by close): the products
    are too small for a pool, and a pool per process, whose threads spin after each product,
    made 4 busy threads on 2 cores: fast was 5x slower with OPENBLAS_NUM_THREADS=2
    (docs/reliability.md, bug 7)."""

    def __init__(self, engine, g, streams: int, parts: int, foreseen: bool = False):
        self.slices = bounds(streams, parts, _lead(foreseen))   # foreseen: an encoder's split
        blas = _one_blas_thread()             # before the fork: the children's too
        children: list[_Child] = []
        try:
            for lo, hi in self.slices[1:]:
                children.append(_Child(engine, g, hi - lo, [c.conn for c in children]))
        except BaseException:
            _close_all(children, blas)
            raise
        self.children = children
        self._fin = weakref.finalize(self, _close_all, children, blas)
        engine.set_threads(1)                 # one thread per process: the cores are taken
        self.local = engine.init_state(self.slices[0][1], g)
        self.engine = engine
        self._next: np.ndarray | None = None  # foreseen bytes of the step after the next
        self._told: np.ndarray | None = None  # bytes the children already have for the next step

    def step(self, byte: np.ndarray) -> np.ndarray:
        """byte (B,) -> logits (B, V) int64, as ExactModel.step on the whole batch gives them."""
        got: list[np.ndarray] = []
        self.step_parts(byte, lambda lo, hi, logits: got.append(logits))
        return np.concatenate(got)

    def _go(self, byte: np.ndarray) -> None:
        """Each child gets its slice of a step's bytes."""
        for c, (lo, hi) in zip(self.children, self.slices[1:], strict=True):
            c.go(byte[lo:hi])

    def foresee(self, byte: np.ndarray) -> None:
        """The bytes the step after the next `step_parts` will be given, when they are known
        (the encoder knows them all): the children get them with the next step's, so each
        computes that step while this process codes the one before; a step's results are the
        same either way (the children's `core` reads nothing but its bytes and its state)."""
        self._next = np.array(byte, dtype=np.int64)

    def step_parts(self, byte: np.ndarray, emit, meanwhile=None) -> None:
        """byte (B,) -> the logits of ExactModel.step on the whole batch, handed to
        emit(lo, hi, logits) slice by slice: each process runs `core` on its slice; this one
        hands over its own slice first, through `correct` (the online adaptation, shared by
        every stream, lives here), so the coder works on it while the children compute theirs;
        `meanwhile` runs once the children have started. The adapter remembers all rows."""
        if self._told is None:                    # the children do not have this step's bytes
            self._go(byte)
        elif not np.array_equal(self._told, byte):
            raise EngineError("the bytes of a step differ from those foreseen for it (a bug, "
                              "not damage)")
        self._told, self._next = self._next, None
        if self._told is not None:                # and the next step's, to compute meanwhile
            self._go(self._told)
        adapter = self.local.adapter
        if adapter is not None:
            adapter.learn(byte)                   # the bytes coded at the step before
        if meanwhile is not None:
            meanwhile()
        got = [self.engine.core(byte[:self.slices[0][1]], self.local)]
        logits, feats = [], []
        for i, (lo, hi) in enumerate(self.slices):
            if i:
                raw, final, x8 = self.children[i - 1].result()
                got.append((raw, final.astype(bool), None if adapter is None else x8))
            raw, final, x8 = got[i]
            out, x = self.engine.correct(raw, final, x8, adapter)
            logits.append(out)
            feats.append(x)
            emit(lo, hi, out)
        if adapter is not None:
            adapter.remember(np.concatenate(feats), np.concatenate(logits),
                             np.concatenate([g[1] for g in got]))

    def close(self) -> None:
        """Ends the children now (also done when this object is freed)."""
        self._fin()


__all__ = ["MIN_ROWS", "EngineError", "Split", "bounds", "can_fork", "parts_for", "started"]
