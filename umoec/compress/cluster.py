"""Frames across machines: a Dask distributed cluster codes the frames of one input.

The workers run the same frame code as the local processes (workers.py) and the engine is exact
integer arithmetic, so the bytes written do not depend on where a frame ran; frames come back in
input order through a window of 2 x the cluster's worker threads, so memory stays bounded here.
The model is sent once to every worker (scattered), so a worker machine needs the package but not
the model file. Dask rather than Ray: pure-Python wheels (~3 MB with its dependencies, against
Ray's ~70 MB compiled one), a scheduler and workers started with two commands (`dask scheduler`,
`dask worker ADDRESS`), and the ordered futures this needs; see docs/compress.md#frames.

`distributed` is an optional dependency (`pip install 'u-moec-tiny[cluster]'`): imported only
when a cluster is asked for.
"""
from __future__ import annotations

import os
from collections import deque
from collections.abc import Iterator

from .. import installed_version
from ..codec.errors import CodecError
from ..errors import UserError
from . import workers as W

INSTALL = "pip install 'u-moec-tiny[cluster]' (Dask's distributed package)"
CONNECT_TIMEOUT_S = 10
SCHEMES = ("tcp", "tls")


def _client_class():
    try:
        from distributed import Client
    except ImportError:
        raise UserError(f"--cluster needs Dask's distributed package, which is not installed: "
                        f"{INSTALL}") from None
    return Client


def _checked(address: str) -> str:
    """A scheduler address Dask can dial (`tcp://HOST:PORT`, `tls://...` or `HOST:PORT`),
    refused here when it cannot be one: a Client half-made from a bad address complains again
    at exit."""
    from distributed.comm.addressing import parse_address
    try:
        scheme, loc = parse_address(address.strip(), strict=False)
    except (ValueError, TypeError) as exc:
        raise UserError(f"--cluster {address!r} is not a scheduler address ({exc})") from None
    if scheme not in SCHEMES or not loc:
        raise UserError(f"--cluster {address!r} is not a scheduler address: give "
                        "tcp://HOST:PORT (or tls://HOST:PORT), as `dask scheduler` prints")
    return f"{scheme}://{loc}"


def _worker_versions() -> tuple[int, str]:
    """On a worker: its coding engine version and package version."""
    from ..engine import ENGINE_VERSION
    return ENGINE_VERSION, _package_version()


def _package_version() -> str:
    return installed_version()


def remote(name: str, *args):
    """On a worker: the job `name` with the model that came last in `args` (the scattered
    model), one engine thread (the frames are the parallel work), no progress."""
    os.environ["UMOEC_ENGINE_THREADS"] = "1"
    *job, model = args
    return W.run(name, job, model)


def _connect(Client, address: str, timeout_s: float, tries: int = 3):
    """A client of the scheduler at `address`. distributed asserts that the scheduler's first
    message is alone, but a message the scheduler sends to every client (another client's
    cancel, for one) can share its 2 ms batch: that handshake is tried again."""
    for attempt in range(tries):
        try:
            return Client(address, timeout=timeout_s, set_as_default=False)
        except AssertionError:
            if attempt == tries - 1:
                raise OSError("the scheduler's handshake failed 3 times") from None


class Cluster:
    """A connection to a Dask scheduler that codes frames (stream.py's `cluster`)."""

    def __init__(self, address: str, timeout_s: float = CONNECT_TIMEOUT_S):
        Client = _client_class()
        self.address = _checked(address)
        try:
            self.client = _connect(Client, self.address, timeout_s)
        except (OSError, TimeoutError, ValueError) as exc:
            raise UserError(f"cannot reach the Dask scheduler at {self.address}: {exc}") from None
        self._models: dict[str, object] = {}
        try:
            self._check_workers()
        except BaseException:
            self.close()
            raise

    def _check_workers(self) -> None:
        """Refuse a cluster without workers, or with workers of another engine version (their
        frames would be written for another engine)."""
        from ..engine import ENGINE_VERSION
        if not self.client.nthreads():
            raise UserError(f"the Dask scheduler at {self.address} has no workers (start some "
                            f"with `dask worker {self.address}`)")
        here = (ENGINE_VERSION, _package_version())
        try:
            versions = self.client.run(_worker_versions)
        except Exception as exc:   # e.g. a worker without the package cannot load the function
            raise UserError(f"the Dask workers at {self.address} cannot run u-moec-tiny "
                            f"({type(exc).__name__}: {exc}): {INSTALL} on every worker") from None
        for worker, there in sorted(versions.items()):
            there = tuple(there)
            if there != here:
                raise UserError(f"Dask worker {worker} runs u-moec-tiny {there[1]} (coding "
                                f"engine v{there[0]}); this umc is {here[1]} (engine v{here[0]}): "
                                "install the same version on every worker")

    def threads(self) -> int:
        """Worker threads of the cluster now (it may grow or shrink while coding)."""
        return max(1, sum(self.client.nthreads().values()))

    def describe(self) -> str:
        n = self.client.nthreads()
        return f"Dask cluster {self.address}: {len(n)} workers, {sum(n.values())} threads"

    def _model_ref(self, model):
        """The model on every worker (sent once per model), or None for the cm profile."""
        if model is None:
            return None
        key = model.hash
        if key not in self._models:
            self._models[key] = self.client.scatter(model, broadcast=True, hash=False)
        return self._models[key]

    def ordered(self, name: str, jobs: Iterator[tuple], model) -> Iterator:
        """workers.<name>(*job, None, model) for every (job, progress) of `jobs`, in order."""
        ref = self._model_ref(model)
        pending: deque = deque()
        index = 0
        try:
            for job, _ in jobs:
                pending.append((index, self.client.submit(remote, name, *job, ref, pure=False)))
                index += 1
                while len(pending) >= 2 * self.threads():
                    yield W.unwrap(self._result(*pending.popleft()))
            while pending:
                yield W.unwrap(self._result(*pending.popleft()))
        except BaseException:
            # an error, Ctrl-C or an abandoned generator: the cluster drops what nobody will use
            if pending:   # an empty cancel still goes to every client of the scheduler
                self.client.cancel([f for _, f in pending])
            raise

    def _result(self, index: int, future):
        try:
            return future.result()
        except Exception as exc:   # a lost worker, a lost scheduler: not the file's fault
            raise CodecError(f"Dask cluster {self.address}: frame {index} was not coded "
                             f"({type(exc).__name__}: {exc})", exit_code=1) from None

    def close(self) -> None:
        try:
            self.client.close()
        except Exception:
            pass

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
