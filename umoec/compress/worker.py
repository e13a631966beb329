"""The headless compression worker: one compression, verification, evaluation or model export per
process, driven by a JSON-lines job protocol any front end can use (it imports only umoec and the
standard library).

    python -m umoec.compress.worker compress --input F --output F.umc [--model M | --checkpoint C]
                                             --profile P
    python -m umoec.compress.worker verify --umc F.umc [--expect-sha256 HEX]
    python -m umoec.compress.worker eval --run RUNDIR [--model M | --checkpoint C] --max-bytes N
                                         --profile P
    python -m umoec.compress.worker export --checkpoint C --output RUNDIR/models/stepNNNNNN.umm

M is a coding model (name, hash or .umm path; none: the shipped default model); C a training
checkpoint, exported to RUN/models/stepNNNNNN.umm first. Verification decodes with the model the
.umc file names (found by its hash on the model search path, umoec/engine/store.py).

It calls the same API as bin.compress / bin.decompress / bin.evaluate (umoec.compress.api and
umoec.compress.evaluate) and reports on stdout as JSON lines, one object each:

    {"event": "progress", "stage": "compress", "done": 1234, "total": 50000}
    {"event": "result", ...}                 the last line of a successful job (exit 0)
    {"event": "error", "message": "..."}     a refusal or failure the user can act on (exit 1 or 2)

The front end that drives it (the cockpit: gui/services/compress_jobs.py) starts it in its own session and
cancels it with SIGTERM (the work stops, atomic writes leave nothing behind, exit 143). If the front
end goes away, the next progress line cannot be written (broken pipe) and the worker stops too.
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

# The comparison rows of the Compression tab (names as in umoec.codec.baselines), each when it can
# run here (a strong peer that is not installed is left out).
COMPARE_WITH = ("gzip -9", "zstd -22", "xz -9e", "brotli -11", "PPMd -o16", "zpaq -m5", "bzip3",
                "paq9a")
EXIT_CANCELLED = 143
# An evaluation of a model that is not one of the run's own names the model in its dataset label
# (eval_key); gui/pages/evaluation/callbacks.py splits labels at this tag.
MODEL_TAG = " · model "


class Cancelled(BaseException):
    """SIGTERM arrived (the user pressed Cancel, or the job timed out)."""


class ParentGone(BaseException):
    """The front end that started this worker is gone: nobody would record the result."""


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


# -- the jobs ---------------------------------------------------------------------------------
def model_args(a) -> dict:
    """compress_path's model arguments: a model (name, hash or .umm path; none = the shipped
    default) or a training checkpoint to export first (RUN/models/stepNNNNNN.umm)."""
    if getattr(a, "checkpoint", None):
        return {"checkpoint": a.checkpoint}
    return {"model": a.model or None}


def do_compress(a) -> dict:
    _prepare_threads(a.profile)
    from umoec.codec.baselines import PeerFailed, available, run_baseline
    from umoec.compress.api import compress_path
    size = Path(a.input).stat().st_size if Path(a.input).is_file() else 0
    stage("load" if a.checkpoint else "compress", 0, 0 if a.checkpoint else size)
    t0 = time.perf_counter()
    res = compress_path(a.input, a.output, profile=a.profile, progress=Reporter("compress"),
                        **model_args(a))
    wall = time.perf_counter() - t0
    data = Path(a.input).read_bytes()
    baselines = []
    can = available()
    names = [n for n in (a.baselines.split(",") if a.baselines else []) if n in can]
    for i, name in enumerate(names):
        stage("baselines", i, len(names))
        try:
            b = run_baseline(name, data)
        except PeerFailed as exc:       # shown as a row with its reason, not a failed job
            baselines.append({"name": name, "error": str(exc)})
            continue
        baselines.append({"name": b.name, "raw_bytes": b.raw_bytes, "packed_bytes": b.packed_bytes,
                          "seconds": b.compress_s})
    return {"raw_bytes": res.stats.raw_bytes, "packed_bytes": res.stats.packed_bytes,
            "seconds": res.stats.seconds, "wall_s": wall, "profile": res.profile,
            "streams": res.streams, "model": res.model, "model_hash": res.model_hash,
            "input_sha256": hashlib.sha256(data).hexdigest(), "baselines": baselines}


def _prepare_threads(profile: str, wanted: int = 0):
    """BLAS / OpenMP thread count, before numpy loads (umoec/compress/threads.py)."""
    from umoec.compress.profiles import base, names
    from umoec.compress.threads import prepare
    return prepare(wanted or (base(profile).threads if profile in names() else 1))


def do_verify(a) -> dict:
    """Decode with the model the file names (found by its hash on the search path)."""
    from umoec.compress.profiles import most_threads
    _prepare_threads("", most_threads())
    from umoec.codec.errors import CodecError
    from umoec.compress.api import decompress_path
    stage("decompress")
    with tempfile.TemporaryDirectory(prefix="umoec-verify-") as tmp:
        out = Path(tmp) / "decoded.bin"
        try:
            res = decompress_path(a.umc, out, progress=Reporter("decompress"))
        except CodecError as exc:  # the decoder refused: that is the verification's answer
            return {"ok": False, "reason": str(exc)}
        got = sha256_file(out)
    if a.expect_sha256 and got != a.expect_sha256:
        return {"ok": False, "reason": f"sha256 of the decoded bytes {got[:16]}... differs from the "
                f"original's {a.expect_sha256[:16]}...", "sha256": got, "model": res.model}
    return {"ok": True, "reason": f"sha256 equal ({got[:16]}...), {res.stats.raw_bytes:,} bytes, "
            f"decoded with model {res.model}", "sha256": got, "seconds": res.stats.seconds,
            "model": res.model, "model_hash": res.model_hash}


def do_eval(a) -> dict:
    _prepare_threads(a.profile)
    from umoec.compress.evaluate import PRIME_BYTES, evaluate, find_data, training_prime
    from umoec.run import RunDir
    root = Path(__file__).resolve().parents[2]  # the repository: data/, a run's relative data.path
    run = RunDir(a.run)
    reporters: dict[str, Reporter] = {}

    def progress(name: str, done: int, total: int) -> None:
        reporters.setdefault(name, Reporter(name))(done, total)
    stage("load")
    data, dataset, note = find_data(None, run, root)
    if a.checkpoint:  # the checkpoint's own training data primes the primed baselines
        prime, label = training_prime(run, root, PRIME_BYTES)
        report = evaluate(run, a.checkpoint, data, dataset, profile=a.profile,
                          max_bytes=a.max_bytes, progress=progress, note=note, prime=prime,
                          prime_label=label)
        model = ""
    else:
        report, model = evaluate_model(run, a.model, data, dataset, profile=a.profile,
                                       max_bytes=a.max_bytes, progress=progress, note=note)
    return {"dataset": report.dataset, "source": report.source, "step": report.step,
            "bpb": report.bpb, "roundtrip_ok": report.roundtrip_ok, "note": report.note,
            "roundtrip_error": report.roundtrip_error, "model": model,
            "original_bytes": report.original_bytes, "compressed_bytes": report.compressed_bytes}


def model_tag(run, model) -> str:
    """What an evaluation of `model` appends to its dataset name in eval_results.

    A model exported from this run's checkpoint N is that checkpoint: no tag, the row
    umoec.compress.evaluate.evaluate writes for the checkpoint. Any other model (the shipped
    default, another run's) keeps its own training step and names itself, so its rows never
    replace the run's own: "small-val[:2000] · model general-v1 (186335b9d17d)"."""
    own = model.path is not None and Path(model.path).resolve().parent == run.models_dir.resolve()
    return "" if own else f"{MODEL_TAG}{model.label()}"


def evaluate_model(run, spec: str, data_path: Path, dataset: str, *, profile: str, max_bytes: int,
                   progress, note: str = ""):
    """umoec.compress.evaluate.evaluate for a coding model instead of a checkpoint."""
    from umoec.compress.api import open_model
    from umoec.compress.evaluate import evaluate
    model = open_model(spec or None)
    report = evaluate(run, None, data_path, dataset, profile=profile, max_bytes=max_bytes,
                      progress=progress, note=note, model=model, tag=model_tag(run, model))
    return report, model.label()


def do_export(a) -> dict:
    """Training checkpoint -> coding model file (imports torch, hence a worker)."""
    _prepare_threads("", 1)
    stage("export")
    from umoec.engine import modelfile as mf
    from umoec.engine.export import export_checkpoint
    if not Path(a.checkpoint).is_file():
        raise mf.ModelFileError(f"checkpoint {a.checkpoint} does not exist")
    m = export_checkpoint(a.checkpoint)
    mf.write(m, a.output)
    return {"name": m.name, "model_hash": m.hash, "model": m.label(), "path": str(a.output),
            "bytes": Path(a.output).stat().st_size,
            "step": int((m.info.get("source") or {}).get("step", 0) or 0)}


def parse(argv) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m umoec.compress.worker", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="job", required=True)
    c = sub.add_parser("compress")
    c.add_argument("--input", type=Path, required=True)
    c.add_argument("--output", type=Path, required=True)
    cm = c.add_mutually_exclusive_group()
    cm.add_argument("--model", help="model name, hash or .umm path (default: the shipped model)")
    cm.add_argument("--checkpoint", type=Path, help="a training checkpoint, exported first")
    c.add_argument("--profile", default="turbo")
    c.add_argument("--baselines", default=",".join(COMPARE_WITH),
                   help="comma-separated classical compressors to run on the same file")
    v = sub.add_parser("verify")
    v.add_argument("--umc", type=Path, required=True)
    v.add_argument("--expect-sha256", default="")
    e = sub.add_parser("eval")
    e.add_argument("--run", type=Path, required=True)
    em = e.add_mutually_exclusive_group()
    em.add_argument("--model", help="model name, hash or .umm path (default: the shipped model)")
    em.add_argument("--checkpoint", type=Path, help="a training checkpoint of the run")
    e.add_argument("--max-bytes", type=int, default=100_000)
    e.add_argument("--profile", default="turbo")
    x = sub.add_parser("export")
    x.add_argument("--checkpoint", type=Path, required=True)
    x.add_argument("--output", type=Path, required=True, help="RUN/models/stepNNNNNN.umm")
    return p.parse_args(argv)


def user_message(exc: Exception) -> tuple[str, int]:
    """(message, exit code) of an unexpected exception; a model file's own refusal (damaged, not
    a model, not found, ambiguous) is shown as is, like a UserError."""
    from umoec.errors import EXIT_FAILURE, EXIT_USAGE
    if "umoec.engine.modelfile" in sys.modules:  # loaded by the job, never just for this check
        from umoec.engine.modelfile import ModelFileError
        if isinstance(exc, ModelFileError):
            return str(exc), EXIT_USAGE
    if isinstance(exc, LookupError) and type(exc).__module__.startswith("umoec."):
        return str(exc), EXIT_USAGE  # umoec.engine.store.ModelNotFound / AmbiguousModel
    return f"{type(exc).__name__}: {exc}", EXIT_FAILURE


def _on_sigterm(_sig, _frame):
    raise Cancelled()


def main(argv=None) -> int:
    a = parse(argv)
    signal.signal(signal.SIGTERM, _on_sigterm)
    from umoec.config import ConfigError
    from umoec.errors import EXIT_FAILURE, UserError
    try:
        result = {"compress": do_compress, "verify": do_verify, "eval": do_eval,
                  "export": do_export}[a.job](a)
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
        msg, code = user_message(exc)
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
