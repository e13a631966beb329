"""The exact engine's streams split over processes: each step of a coding, a forked child process
computes the logits of a slice of the streams while this process computes the rest.

Why processes, not threads: between its compiled kernels a step runs Python, and the GIL
serialised two threads' halves (a split over Python threads was slower: docs/compress.md). Why
it changes no bit: without online adaptation every stream's logits depend only on that stream's
bytes and state (each row is quantised on its own, products are exact, the cascade's tables and
the SSM/conv state are per stream, MoE padding rows are dropped), so a slice of the streams run by
another ExactModel state gives the very integers of the whole batch (tests/umoec/engine/
test_split.py checks it on every profile setting that splits).

The child is forked (copy-on-write: the model is not loaded again) when coding starts and exits
when its pipe closes (the coding ended, or this process died). Messages are raw bytes through a
pipe, the bytes and logits go through an anonymous shared mapping: nothing is pickled.
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

MIN_ROWS = 32       # streams per process at least (UMOEC_SPLIT_MIN_ROWS): a step's fixed costs
                    # (~0.8 ms of Python and calls) are paid in every process
_GO, _DONE, _FAIL = b"s", b"k", b"E"
_started = 0        # child processes this process has started (reports, tests)


def started() -> int:
    return _started


def can_fork() -> bool:
    return "fork" in multiprocessing.get_all_start_methods()


def parts_for(streams: int, threads: int, adapt_rate: int) -> int:
    """How many processes share the streams: one per thread the plan allows, each with at least
    MIN_ROWS streams; 1 with online adaptation (its weights are shared by all streams) or where
    processes cannot be forked."""
    if adapt_rate or threads < 2 or not can_fork():
        return 1
    try:
        least = max(1, int(os.environ.get("UMOEC_SPLIT_MIN_ROWS", MIN_ROWS)))
    except ValueError:
        least = MIN_ROWS
    return max(1, min(threads, streams // least))


def bounds(streams: int, parts: int) -> list[tuple[int, int]]:
    """Contiguous slices of the streams, as even as they go (the first ones one longer)."""
    q, r = divmod(streams, parts)
    out, lo = [], 0
    for i in range(parts):
        hi = lo + q + (i < r)
        out.append((lo, hi))
        lo = hi
    return out


class EngineError(RuntimeError):
    """A child process of the engine failed: a bug or a killed process, never the file's fault."""


def _serve(engine, g, n: int, conn, others, buf) -> None:
    """The child: its own state for n streams, one step per message until the pipe closes."""
    for c in others:                          # the parent's ends: EOF must reach us when it dies
        c.close()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle; we end on EOF
    engine.set_threads(1)
    byte = np.frombuffer(buf, dtype=np.int64, count=n)
    out = np.frombuffer(buf, dtype=np.int64, count=n * VOCAB, offset=8 * n).reshape(n, VOCAB)
    try:
        st = engine.init_state(n, g)
        while True:
            try:
                conn.recv_bytes()
            except (EOFError, OSError):
                break
            logits, st = engine.step(byte.copy(), st)
            out[...] = logits
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
        self.n = n
        self.buf = mmap.mmap(-1, 8 * n * (1 + VOCAB))       # anonymous, MAP_SHARED: seen by both
        self.byte = np.frombuffer(self.buf, dtype=np.int64, count=n)
        self.out = np.frombuffer(self.buf, dtype=np.int64, count=n * VOCAB,
                                 offset=8 * n).reshape(n, VOCAB)
        ctx = multiprocessing.get_context("fork")
        self.conn, child_end = ctx.Pipe(duplex=True)
        self.proc = ctx.Process(target=_serve, daemon=True, name="umoec-engine",
                                args=(engine, g, n, child_end, [self.conn, *others], self.buf))
        self.proc.start()
        child_end.close()
        global _started
        _started += 1

    def go(self, byte: np.ndarray) -> None:
        self.byte[:] = byte
        self._send()

    def _send(self) -> None:
        try:
            self.conn.send_bytes(_GO)
        except OSError:
            raise self._died() from None

    def result(self) -> np.ndarray:
        try:
            msg = self.conn.recv_bytes()
        except (EOFError, OSError):
            raise self._died() from None
        if msg != _DONE:
            detail = msg[1:].decode("utf-8", "replace").strip().splitlines()
            raise EngineError("the engine's second process failed (a bug, not damage): "
                              + (detail[-1] if detail else "no detail"))
        return self.out

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


def _close_all(children: list) -> None:
    for c in children:
        c.close()


class Split:
    """Steps of `engine` over B streams, the first slice here, the others in child processes."""

    def __init__(self, engine, g, streams: int, parts: int):
        self.slices = bounds(streams, parts)
        children: list[_Child] = []
        try:
            for lo, hi in self.slices[1:]:
                children.append(_Child(engine, g, hi - lo, [c.conn for c in children]))
        except BaseException:
            _close_all(children)
            raise
        self.children = children
        self._fin = weakref.finalize(self, _close_all, children)
        engine.set_threads(1)                 # one thread per process: the cores are taken
        self.local = engine.init_state(self.slices[0][1], g)
        self.engine = engine

    def step(self, byte: np.ndarray) -> np.ndarray:
        """byte (B,) -> logits (B, V) int64, as ExactModel.step on the whole batch gives them."""
        for c, (lo, hi) in zip(self.children, self.slices[1:], strict=True):
            c.go(byte[lo:hi])
        first, self.local = self.engine.step(byte[:self.slices[0][1]], self.local)
        return np.concatenate([first, *(c.result() for c in self.children)])

    def close(self) -> None:
        """Ends the children now (also done when this object is freed)."""
        self._fin()


__all__ = ["MIN_ROWS", "EngineError", "Split", "bounds", "can_fork", "parts_for", "started"]
