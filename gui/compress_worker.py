"""The cockpit's background worker: one compression, verification or evaluation per process.

    python -m gui.compress_worker compress --input F --output F.umc --checkpoint C --profile P
    python -m gui.compress_worker verify --umc F.umc --checkpoint C [--expect-sha256 HEX]
    python -m gui.compress_worker eval --run RUNDIR --checkpoint C --max-bytes N --profile P

It calls the same API as bin.compress / bin.decompress / bin.evaluate (umoec.compress.api and
umoec.compress.evaluate) and reports on stdout as JSON lines, one object each:

    {"event": "progress", "stage": "compress", "done": 1234, "total": 50000}
    {"event": "result", ...}                 the last line of a successful job (exit 0)
    {"event": "error", "message": "..."}     a refusal or failure the user can act on (exit 1 or 2)

The cockpit (gui/compress_jobs.py) starts it in its own session and cancels it with SIGTERM (the
work stops, atomic writes leave nothing behind, exit 143). If the cockpit goes away, the next
progress line cannot be written (broken pipe) and the worker stops too.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import signal
import sys
import tempfile
import time
from pathlib import Path

# The comparison rows of the Compression tab (names as in umoec.codec.baselines.BASELINES).
COMPARE_WITH = ("gzip -9", "zstd -22", "xz -9e", "brotli -11")
EXIT_CANCELLED = 143


class Cancelled(BaseException):
    """SIGTERM arrived (the user pressed Cancel, or the job timed out)."""


class ParentGone(BaseException):
    """The cockpit that started this worker is gone: nobody would record the result."""


def emit(obj: dict) -> None:
    try:
        sys.stdout.write(json.dumps(obj) + "\n")
        sys.stdout.flush()
    except (BrokenPipeError, ValueError):
        raise ParentGone() from None


class Reporter:
    """A progress(done, total) callback for one stage, at most ~10 lines a second."""

    def __init__(self, stage: str):
        self.stage, self.last, self.ppid = stage, 0.0, os.getppid()

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if now - self.last < 0.1 and done < total:
            return
        self.last = now
        if os.getppid() != self.ppid:
            raise ParentGone()
        emit({"event": "progress", "stage": self.stage, "done": int(done), "total": int(total)})


def stage(name: str, done: int = 0, total: int = 0) -> None:
    emit({"event": "progress", "stage": name, "done": done, "total": total})


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


# -- the three jobs ---------------------------------------------------------------------------
def do_compress(a) -> dict:
    plan = _prepare_threads(a.profile)
    from umoec.codec.baselines import run_baselines
    from umoec.compress.api import compress_path
    size = Path(a.input).stat().st_size if Path(a.input).is_file() else 0
    stage("compress", 0, size)  # loading the model counts as compressing
    t0 = time.perf_counter()
    res = compress_path(a.input, a.output, a.checkpoint, profile=a.profile, threads=plan.threads,
                        progress=Reporter("compress"))
    wall = time.perf_counter() - t0
    data = Path(a.input).read_bytes()
    baselines = []
    names = [n for n in (a.baselines.split(",") if a.baselines else []) if n]
    for i, name in enumerate(names):
        stage("baselines", i, len(names))
        b = run_baselines(data, [name])[0]
        baselines.append({"name": b.name, "raw_bytes": b.raw_bytes, "packed_bytes": b.packed_bytes,
                          "seconds": b.compress_s})
    return {"raw_bytes": res.stats.raw_bytes, "packed_bytes": res.stats.packed_bytes,
            "seconds": res.stats.seconds, "wall_s": wall, "profile": res.profile,
            "streams": res.streams, "threads": res.threads, "checkpoint_step": res.checkpoint_step,
            "input_sha256": hashlib.sha256(data).hexdigest(), "baselines": baselines}


def _prepare_threads(profile: str):
    """Thread count and OpenMP wait policy, before torch loads (umoec/compress/threads.py)."""
    from umoec.compress.profiles import PROFILES
    from umoec.compress.threads import prepare
    return prepare(PROFILES[profile].threads if profile in PROFILES else 1)


def do_verify(a) -> dict:
    from umoec.compress.threads import prepare_for_file
    prepare_for_file(a.umc)
    from umoec.compress.api import decompress_path
    from umoec.codec.errors import CodecError
    stage("decompress")
    with tempfile.TemporaryDirectory(prefix="umoec-verify-") as tmp:
        out = Path(tmp) / "decoded.bin"
        try:
            res = decompress_path(a.umc, out, a.checkpoint, progress=Reporter("decompress"))
        except CodecError as exc:  # the decoder refused: that is the verification's answer
            return {"ok": False, "reason": str(exc)}
        got = sha256_file(out)
    if a.expect_sha256 and got != a.expect_sha256:
        return {"ok": False, "reason": f"sha256 of the decoded bytes {got[:16]}... differs from the "
                f"original's {a.expect_sha256[:16]}...", "sha256": got}
    return {"ok": True, "reason": f"sha256 equal ({got[:16]}...), {res.stats.raw_bytes:,} bytes",
            "sha256": got, "seconds": res.stats.seconds}


def do_eval(a) -> dict:
    plan = _prepare_threads(a.profile)
    from umoec.compress.evaluate import evaluate, find_data
    from umoec.run import RunDir
    root = Path(__file__).resolve().parents[1]
    run = RunDir(a.run)
    reporters: dict[str, Reporter] = {}

    def progress(name: str, done: int, total: int) -> None:
        reporters.setdefault(name, Reporter(name))(done, total)
    stage("load")
    data, dataset, note = find_data(None, run, root)
    report = evaluate(run, a.checkpoint, data, dataset, profile=a.profile, max_bytes=a.max_bytes,
                      progress=progress, note=note, threads=plan.threads)
    return {"dataset": report.dataset, "source": report.source, "step": report.step,
            "bpb": report.bpb, "roundtrip_ok": report.roundtrip_ok, "note": report.note,
            "original_bytes": report.original_bytes, "compressed_bytes": report.compressed_bytes}


def parse(argv) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m gui.compress_worker", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="job", required=True)
    c = sub.add_parser("compress")
    c.add_argument("--input", type=Path, required=True)
    c.add_argument("--output", type=Path, required=True)
    c.add_argument("--checkpoint", type=Path, required=True)
    c.add_argument("--profile", default="turbo")
    c.add_argument("--baselines", default=",".join(COMPARE_WITH),
                   help="comma-separated classical compressors to run on the same file")
    v = sub.add_parser("verify")
    v.add_argument("--umc", type=Path, required=True)
    v.add_argument("--checkpoint", type=Path)
    v.add_argument("--expect-sha256", default="")
    e = sub.add_parser("eval")
    e.add_argument("--run", type=Path, required=True)
    e.add_argument("--checkpoint", type=Path, required=True)
    e.add_argument("--max-bytes", type=int, default=100_000)
    e.add_argument("--profile", default="turbo")
    return p.parse_args(argv)


def _on_sigterm(_sig, _frame):
    raise Cancelled()


def main(argv=None) -> int:
    a = parse(argv)
    signal.signal(signal.SIGTERM, _on_sigterm)
    from umoec.cli import EXIT_FAILURE, UserError
    from umoec.config import ConfigError
    try:
        result = {"compress": do_compress, "verify": do_verify, "eval": do_eval}[a.job](a)
        emit({"event": "result", **result})
        return 0
    except (Cancelled, KeyboardInterrupt):
        return EXIT_CANCELLED
    except ParentGone:
        return EXIT_FAILURE
    except (UserError, ConfigError) as exc:
        msg = str(exc)
        code = getattr(exc, "exit_code", 2)
    except MemoryError:
        msg, code = "out of memory (try a smaller file, or more RAM)", EXIT_FAILURE
    except Exception as exc:  # the last line of defence: a message, never a bare traceback
        msg, code = f"{type(exc).__name__}: {exc}", EXIT_FAILURE
        if os.environ.get("UMOEC_DEBUG") == "1":
            import traceback
            traceback.print_exc()
    try:
        emit({"event": "error", "message": msg})
    except ParentGone:
        pass
    return code


if __name__ == "__main__":
    sys.exit(main())
