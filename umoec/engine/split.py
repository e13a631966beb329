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
mixing stage after the network codes stream after stream, and this process codes every slice.

An encoder knows every byte: it tells the split the next step's bytes (`foresee`), so the
children compute that step while this process codes their slices of the one before (two slots
of each in the mapping); this process's slice comes first and is coded while they compute. A
decoder cannot foresee: a stream's next step waits for its byte to be decoded. So a decoder's
child holds two groups of streams, one coded before this process's slice and one after
(`interleaved`): as soon as the first group's bytes are decoded the child gets them (the coder
hands them back through `emit`) and computes that group's next step while this process
computes and codes the rest, then the second group's; the child no longer idles while its
streams are coded.

The child is forked (copy-on-write: the model is not loaded again) when coding starts and exits
when its pipe closes (the coding ended, or this process died). The bytes and logits go through
an anonymous shared mapping, nothing is pickled. Each side says "go" / "done" (a group's step)
by a counter in the mapping, on which the other side spins for up to SPIN_S (a sleeping vCPU
took 0.1-0.4 ms to wake at every step). A side that stops spinning raises its flag in the
mapping and sleeps on the pipe; a side that stores a counter and then reads that flag raised
sends a message too (so a step of two spinning sides makes no system call: they cost ~0.05 ms a
step on each side). The pipe also carries a failure report, and its end tells of a dead
process. A message that came late is skipped by the next sleep.
"""
from __future__ import annotations

import itertools
import mmap
import multiprocessing
import os
import signal
import traceback
import weakref

import numpy as np

from ..sizing import VOCAB
from . import kernels

MIN_ROWS = 6        # streams per process at least (UMOEC_SPLIT_MIN_ROWS): a step's fixed costs
                    # (~0.1 ms a process since the block step is compiled) are paid in every
                    # process; 8 streams over two processes gained nothing (docs/compress.md)
LEAD = 0.5          # the coding process's share of the streams against a child's: it also
                    # codes every slice (measured: docs/compress.md; UMOEC_SPLIT_LEAD sets a
                    # decoder's, UMOEC_SPLIT_LEAD_FORESEEN an encoder's)
LEAD_ADAPTING = 0.4  # the same when the model adapts online: the adaptation's step and
                    # correction of every stream run in the coding process too
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


def _lead(foreseen: bool = False, adapting: bool = False) -> float:
    name = "UMOEC_SPLIT_LEAD_FORESEEN" if foreseen else "UMOEC_SPLIT_LEAD"
    default = LEAD_ADAPTING if adapting else LEAD
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


def interleaved(streams: int, parts: int, lead: float = 1.0) -> list[tuple[int, int, int]]:
    """A decoder's slices (lo, hi, owner: 0 this process, c the c-th child), in stream order:
    `bounds`' shares, each child's cut in two groups, the first groups before this process's
    slice and the second ones after it (a child of one stream has one group)."""
    shares = bounds(streams, parts, lead)
    sizes = [hi - lo for lo, hi in shares]
    order = ([(c, (n + 1) // 2) for c, n in enumerate(sizes) if c] + [(0, sizes[0])]
             + [(c, n // 2) for c, n in enumerate(sizes) if c and n // 2])
    out, lo = [], 0
    for owner, n in order:
        out.append((lo, lo + n, owner))
        lo += n
    return out


class EngineError(RuntimeError):
    """A child process of the engine failed: a bug or a killed process, never the file's fault."""


class _Shared:
    """One child's streams in an anonymous shared mapping (MAP_SHARED: after the fork both
    processes see the same pages): its bytes in, core's results out, two of each (a step's
    slot is its count's parity), so the child can compute a group's next step while this
    process still codes the results of the one before (`Split.foresee`, a decoder's groups).
    A group's rows are a range of the child's."""

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


def _serve(engine, g, sizes: list[int], conn, others, io: _Shared) -> None:
    """The child: its own state for each group of streams (sizes), one group's step per "go",
    the groups in turn, until the pipe closes."""
    for c in others:                          # the parent's ends: EOF must reach us when it dies
        c.close()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle; we end on EOF
    engine.set_threads(1)
    _one_blas_thread()                        # see Split
    try:
        states = [engine.init_state(n, g) for n in sizes]
        rows = _rows(sizes)
        done = 0
        while True:
            try:
                _await(io, _GO_AT, done + 1, conn, _CHILD_SLEEPS)   # the parent reports no failure
            except (EOFError, OSError):
                break
            group, slot = done % len(sizes), (done // len(sizes) + 1) & 1
            at = rows[group]
            raw, final, x8 = engine.core(io.byte[slot, at].copy(), states[group])
            io.raw[slot, at] = raw
            io.final[slot, at] = final
            if x8 is not None:
                io.x8[slot, at] = x8
            done += 1
            if kernels.seq_publish(io.counters, _DONE_AT, done, _PARENT_SLEEPS):
                conn.send_bytes(_DONE)
    except BaseException:                     # told to the parent, then gone
        try:
            conn.send_bytes(_FAIL + traceback.format_exc().encode("utf-8", "replace"))
        except OSError:
            pass
    finally:
        os._exit(0)


def _rows(sizes: list[int]) -> list[slice]:
    """Each group's rows among its child's."""
    at = np.cumsum([0, *sizes]).tolist()
    return [slice(a, b) for a, b in itertools.pairwise(at)]


class _Child:
    """A child process and its groups of streams (sizes). Its "go"s and results come a group at
    a time, the groups in turn: go/result k is group k % groups of step k // groups + 1."""

    def __init__(self, engine, g, sizes: list[int], others: list):
        self.io = _Shared(sum(sizes), engine.d.d_model)
        self.rows = _rows(sizes)
        self.sent = 0                         # groups' steps this side said "go" for
        self.taken = 0                        # groups' steps whose results it has read
        ctx = multiprocessing.get_context("fork")
        self.conn, child_end = ctx.Pipe(duplex=True)
        self.proc = ctx.Process(target=_serve, daemon=True, name="umoec-engine",
                                args=(engine, g, sizes, child_end, [self.conn, *others], self.io))
        self.proc.start()
        child_end.close()
        global _started
        _started += 1

    def next_group(self) -> int:
        """The group whose bytes the next `go` gives."""
        return self.sent % len(self.rows)

    def _slot(self, k: int) -> tuple[int, slice]:
        return (k // len(self.rows) + 1) & 1, self.rows[k % len(self.rows)]

    def go(self, byte: np.ndarray) -> None:
        """The bytes of the next group's step not yet said "go" for (at most two steps past the
        results read: the slots)."""
        slot, at = self._slot(self.sent)
        self.io.byte[slot, at] = byte
        self.sent += 1
        if kernels.seq_publish(self.io.counters, _GO_AT, self.sent, _CHILD_SLEEPS):
            try:
                self.conn.send_bytes(_GO)
            except OSError:
                raise self._died() from None

    def result(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(raw, final, x8) of the oldest group's step said "go" for and not read yet: views of
        its slot, valid until that group's step after next is said "go" for."""
        slot, at = self._slot(self.taken)
        self.taken += 1
        try:
            msg = _await(self.io, _DONE_AT, self.taken, self.conn, _PARENT_SLEEPS)
        except (EOFError, OSError):
            raise self._died() from None
        if msg is not None:
            detail = msg[1:].decode("utf-8", "replace").strip().splitlines()
            raise EngineError("the engine's second process failed (a bug, not damage): "
                              + (detail[-1] if detail else "no detail"))
        return self.io.raw[slot, at], self.io.final[slot, at], self.io.x8[slot, at]

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
    """Steps of `engine` over B streams, a slice here, the others in child processes.

    Each process runs one BLAS thread while the split lives (restored by close): the products
    are too small for a pool, and a pool per process, whose threads spin after each product,
    made 4 busy threads on 2 cores: fast was 5x slower with OPENBLAS_NUM_THREADS=2
    (docs/reliability.md, bug 7)."""

    def __init__(self, engine, g, streams: int, parts: int, foreseen: bool = False):
        # slices (lo, hi, owner) in stream order, owner 0 this process
        lead = _lead(foreseen, adapting=bool(engine.adapt_rate))
        if foreseen:                          # an encoder's: its own first, a group per child
            self.slices = [(lo, hi, c) for c, (lo, hi) in enumerate(bounds(streams, parts, lead))]
        else:                                 # a decoder's: each child's groups around its own
            self.slices = interleaved(streams, parts, lead)
        blas = _one_blas_thread()             # before the fork: the children's too
        children: list[_Child] = []
        try:
            for c in range(1, parts):
                sizes = [hi - lo for lo, hi, owner in self.slices if owner == c]
                children.append(_Child(engine, g, sizes, [k.conn for k in children]))
        except BaseException:
            _close_all(children, blas)
            raise
        self.children = children
        self._fin = weakref.finalize(self, _close_all, children, blas)
        engine.set_threads(1)                 # one thread per process: the cores are taken
        lo, hi = next((lo, hi) for lo, hi, owner in self.slices if owner == 0)
        self.local = engine.init_state(hi - lo, g)
        self.engine = engine
        self._groups = [sum(1 for s in self.slices[:i] if s[2] == owner)
                        for i, (_, _, owner) in enumerate(self.slices)]
        self._next: np.ndarray | None = None  # foreseen bytes of the step after the next
        self._told: dict[int, np.ndarray] = {}  # slices whose next step's bytes a child has

    def step(self, byte: np.ndarray) -> np.ndarray:
        """byte (B,) -> logits (B, V) int64, as ExactModel.step on the whole batch gives them."""
        got: list[np.ndarray] = []
        self.step_parts(byte, lambda lo, hi, logits: got.append(logits))
        return np.concatenate(got)

    def foresee(self, byte: np.ndarray) -> None:
        """The bytes the step after the next `step_parts` will be given, when they are known
        (the encoder knows them all): the children get them with the next step's, so each
        computes that step while this process codes the one before; a step's results are the
        same either way (the children's `core` reads nothing but its bytes and its state)."""
        self._next = np.array(byte, dtype=np.int64)

    def _tell(self, i: int, byte: np.ndarray) -> None:
        """Slice i's child gets its bytes of the step after the one it has."""
        self.children[self.slices[i][2] - 1].go(byte)
        self._told[i] = np.array(byte, dtype=np.int64)

    def step_parts(self, byte: np.ndarray, emit, meanwhile=None) -> None:
        """byte (B,) -> the logits of ExactModel.step on the whole batch, handed to
        emit(lo, hi, logits) slice by slice in stream order, each through `correct` (the online
        adaptation, shared by every stream, lives here): this process's own slice as soon as
        it has computed it, a child's once its results come. `meanwhile` runs once the
        children have started. Where emit returns the bytes a child's slice coded (a decoder's
        coder does), that child gets them at once for its next step. The adapter remembers all
        rows."""
        told, self._told = self._told, {}
        for i, (lo, hi, owner) in enumerate(self.slices):
            if not owner:
                continue
            if i not in told:                     # the child does not have this step's bytes
                self.children[owner - 1].go(byte[lo:hi])
            elif not np.array_equal(told[i], byte[lo:hi]):
                raise EngineError("the bytes of a step differ from those a child was given for "
                                  "it (a bug, not damage)")
        if self._next is not None:                # and the next step's, to compute meanwhile
            for i, (lo, hi, owner) in enumerate(self.slices):
                if owner:
                    self._tell(i, self._next[lo:hi])
            self._next = None
        adapter = self.local.adapter
        if adapter is not None:
            adapter.learn(byte)                   # the bytes coded at the step before
        if meanwhile is not None:
            meanwhile()
        logits, feats, finals = [], [], []
        for i, (lo, hi, owner) in enumerate(self.slices):
            if owner:
                child = self.children[owner - 1]
                raw, final, x8 = child.result()
                final = final.astype(bool)
            else:
                raw, final, x8 = self.engine.core(byte[lo:hi], self.local)
            out, x = self.engine.correct(raw, final, x8 if adapter is not None else None, adapter)
            logits.append(out)
            feats.append(x)
            finals.append(final)
            coded = emit(lo, hi, out)
            if (owner and coded is not None and i not in self._told
                    and child.next_group() == self._groups[i]):
                self._tell(i, coded)
        if adapter is not None:
            adapter.remember(np.concatenate(feats), np.concatenate(logits),
                             np.concatenate(finals))

    def close(self) -> None:
        """Ends the children now (also done when this object is freed)."""
        self._fin()


__all__ = ["MIN_ROWS", "EngineError", "Split", "bounds", "can_fork", "interleaved", "parts_for",
           "started"]
