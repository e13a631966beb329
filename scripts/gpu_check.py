"""Checks that need a GPU machine; scripts/gpu_check.sh runs them there, docs/engine.md and
docs/training.md record what they printed.

    python scripts/gpu_check.py codec OUT [DEV] golden .umc files (written on another machine) decode
                                              with the engine's products on CUDA and with numpy;
                                              files written with CUDA products equal numpy's; they
                                              go to OUT/umc_from_gpu.tar for the reverse check
    python scripts/gpu_check.py verify TAR    on any machine: every file in TAR decodes here to its
                                              input (numpy products unless UMOEC_ENGINE_DEVICE)
    python scripts/gpu_check.py speed RUN...  training bytes/s of runs (from their metrics.db)
"""
from __future__ import annotations

import hashlib
import io
import json
import os
import sqlite3
import sys
import tarfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from umoec.compress.api import compress_bytes, decompress_bytes  # noqa: E402
from umoec.engine import device  # noqa: E402
from umoec.engine import modelfile as mf  # noqa: E402

GOLDEN = ROOT / "tests" / "umoec" / "engine" / "golden"
PROFILES = ("turbo", "fast", "balanced", "cm")


def _inputs() -> dict[str, bytes]:
    """What is coded both ways: bytes every checkout has."""
    return {"source.txt": (GOLDEN / "source.txt").read_bytes(),
            "binary.bin": (GOLDEN / "binary.bin").read_bytes(),
            "cm.py-6k": (ROOT / "umoec" / "codec" / "cm.py").read_bytes()[:6000]}


def _model(name: str):
    return mf.read(ROOT / "umoec" / "models" / "default.umm") if name == "default" else \
        mf.read(GOLDEN / name)


def _timed(fn, *args, **kw):
    t0 = time.perf_counter()
    out = fn(*args, **kw)
    return out, time.perf_counter() - t0


def _with(dev: str, fn, *args, **kw):
    """fn with the engine's products on dev ("" = numpy)."""
    old = os.environ.get(device.ENV)
    os.environ[device.ENV] = dev
    try:
        return _timed(fn, *args, **kw)
    finally:
        if old is None:
            os.environ.pop(device.ENV, None)
        else:
            os.environ[device.ENV] = old


def codec(out: Path, dev: str = "cuda") -> bool:
    ok, report = True, {"device": dev, "golden": {}, "written": {}}
    tiny, primed = _model("tiny.umm"), _model("tiny-primed.umm")
    for f in sorted(GOLDEN.rglob("*.umc")):         # container formats 2 and 3 (format3/)
        blob, original = f.read_bytes(), (GOLDEN / f.name.rsplit(".", 2)[0]).read_bytes()
        model = primed if "primed" in f.name else tiny
        res = {}
        for d in ("", dev):
            got, _ = _with(d, decompress_bytes, blob, model)
            res[d or "numpy"] = got == original
        name = f.relative_to(GOLDEN).as_posix()
        report["golden"][name] = res
        ok &= all(res.values())
        print(f"golden {name}: " + " ".join(f"{k}={'ok' if v else 'WRONG'}" for k, v in res.items()))
    default = _model("default")
    out.mkdir(parents=True, exist_ok=True)
    # written as it goes: a run cut short by its time limit still brings back what it made
    with tarfile.open(out / "umc_from_gpu.tar", mode="w") as tar:
        for name, data in _inputs().items():
            for profile in PROFILES:
                blobs, times = {}, {}
                for d in ("", dev):
                    blobs[d], times[d] = _with(d, compress_bytes, data, default, profile=profile)
                back, dt = _with(dev, decompress_bytes, blobs[""], default)
                same = blobs[""] == blobs[dev] and back == data
                ok &= same
                key = f"{name}.{profile}"
                report["written"][key] = {
                    "bytes": len(data), "umc_bytes": len(blobs[dev]), "identical": same,
                    "sha256": hashlib.sha256(data).hexdigest(),
                    "compress_B_per_s": {k or "numpy": round(len(data) / v) for k, v in times.items()},
                    "decompress_B_per_s_on_device": round(len(data) / dt)}
                print(f"written {key}: {len(data)} -> {len(blobs[dev])} B, numpy and {dev} "
                      f"{'identical' if same else 'DIFFER'}; compress B/s numpy "
                      f"{len(data) / times['']:.0f}, {dev} {len(data) / times[dev]:.0f}")
                info = tarfile.TarInfo(f"{key}.umc")
                info.size = len(blobs[dev])
                tar.addfile(info, io.BytesIO(blobs[dev]))
                tar.fileobj.flush()
                (out / "codec.json").write_text(json.dumps(report, indent=1))
    print("codec check:", "PASSED" if ok else "FAILED")
    return ok


def verify(tar_path: Path) -> bool:
    """Decode every file of a tar made by `codec` here; its name says its input and profile."""
    inputs, default, ok = _inputs(), _model("default"), True
    with tarfile.open(tar_path) as tar:
        for m in tar.getmembers():
            name = m.name.rsplit(".", 2)[0]
            blob = tar.extractfile(m).read()
            got = decompress_bytes(blob, default) == inputs[name]
            ok &= got
            print(f"{m.name}: {'decodes to its input' if got else 'WRONG'}")
    print("verify:", "PASSED" if ok else "FAILED")
    return ok


def speed(runs: list[Path]) -> None:
    """Steady training speed: the mean bytes/s of the logged intervals after the first (which
    holds compilation and warm-up)."""
    for run in runs:
        db = run / "metrics.db"
        if not db.exists():
            print(f"{run}: no metrics.db (the run did not start)")
            continue
        with sqlite3.connect(db) as con:
            rows = con.execute("SELECT step, tokens_per_sec, loss, elapsed_s FROM train_metrics "
                               "ORDER BY step").fetchall()
        if len(rows) < 2:
            print(f"{run}: {len(rows)} logged interval(s): too few for a speed")
            continue
        steady = [r[1] for r in rows[1:]]
        print(f"{run.name}: {rows[-1][0]} steps in {rows[-1][3]:.0f} s, steady "
              f"{sum(steady) / len(steady):,.0f} B/s (first interval {rows[0][1]:,.0f}), "
              f"loss {rows[0][2]:.3f} -> {rows[-1][2]:.3f}")


def main(argv: list[str]) -> int:
    if len(argv) < 2 or argv[0] not in ("codec", "verify", "speed"):
        print(__doc__)
        return 2
    if argv[0] == "codec":
        return 0 if codec(Path(argv[1]), *argv[2:3]) else 1
    if argv[0] == "verify":
        return 0 if verify(Path(argv[1])) else 1
    speed([Path(a) for a in argv[1:]])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
