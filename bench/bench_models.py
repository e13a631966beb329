"""The shipped default model on files of several kinds it never saw, next to the classical
compressors people use, all in one run (docs/models.md quotes this table).

Kinds (every file is on a fresh machine of this kind, none in the model's training corpus):
    python    stdlib modules the general corpus holds out (umoec/data/general.py)
    prose     held-out English READMEs and text files of /usr/share/doc
    markup    held-out HTML / Markdown / reST files of /usr/share/doc
    json      dash's component metadata (site-packages, installed with the project)
    csv       a numpy test data set (site-packages)
    log       /var/log/dpkg.log
    binary    the `ls` executable
Each kind is cut to BENCH_KIND_BYTES (default 32768). Profiles: BENCH_PROFILES (default
"fast,balanced"); model: BENCH_MODEL (default: the shipped default). Numbers, not pass/fail;
run with nothing else on the machine.
"""
from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path

from umoec import units
from umoec.codec.baselines import PeerFailed, peers, run_baseline, skipped_peers
from umoec.compress.api import compress_bytes, decompress_bytes, open_model
from umoec.data.general import held_out_files

BASELINES = ("xz -9e", "zstd -19", "brotli -11")


def _read(path: Path) -> bytes:
    import gzip
    raw = path.read_bytes()
    return gzip.decompress(raw) if path.suffix == ".gz" else raw


def _concat(paths, limit: int) -> bytes:
    out = b""
    for p in paths:
        if len(out) >= limit:
            break
        try:
            out += _read(p)
        except OSError:
            continue
    return out[:limit]


def kinds(limit: int) -> dict[str, bytes]:
    held = held_out_files()
    name = lambda p: p.name.lower().removesuffix(".gz")  # noqa: E731
    site = Path(__import__("numpy").__file__).resolve().parents[1]
    out = {
        "python": _concat([p for p in held if p.suffix == ".py"], limit),
        "prose": _concat([p for p in held if "/usr/share/doc" in str(p)
                          and (name(p).startswith("readme") or name(p).endswith(".txt"))], limit),
        "markup": _concat([p for p in held if name(p).endswith((".html", ".md", ".rst"))], limit),
        "json": _concat([site / "dash" / "html" / "metadata.json"], limit),
        "csv": _concat([site / "numpy" / "random" / "tests" / "data" / "mt19937-testset-1.csv"],
                       limit),
        "log": _concat([Path("/var/log/dpkg.log")], limit),
        "binary": _concat([Path(shutil.which("ls") or "/bin/ls").resolve()], limit),
    }
    return {k: v for k, v in out.items() if v}


def main() -> None:
    limit = int(os.environ.get("BENCH_KIND_BYTES", "32768"))
    profiles = os.environ.get("BENCH_PROFILES", "fast,balanced").split(",")
    model = open_model(os.environ.get("BENCH_MODEL") or None)
    strong = [n for n in peers() if n != "zpaq -m4"]
    missing = sorted(set(skipped_peers()) - {"zpaq -m4"})
    data = kinds(limit)
    compress_bytes(b"warm up " * 100, model, profile="fast")        # imports and tables
    cols = [f"umc {p}" for p in profiles] + list(BASELINES) + list(strong)
    print(f"model {model.label()}; bits per byte (lower is better), {limit:,} bytes per kind"
          + (f"; not installed here: {', '.join(missing)}" if missing else ""))
    print(f"{'kind':8s} {'bytes':>7s} " + " ".join(f"{c:>13s}" for c in cols))
    speed = {c: [0, 0.0] for c in cols}
    for kind, raw in data.items():
        row = []
        for p in profiles:
            t0 = time.perf_counter()
            blob = compress_bytes(raw, model, profile=p)
            dt = time.perf_counter() - t0
            if decompress_bytes(blob, model) != raw:
                raise SystemExit(f"{kind}: round trip failed")
            row.append(units.bpb(len(blob), len(raw)))
            speed[f"umc {p}"][0] += len(raw)
            speed[f"umc {p}"][1] += dt
        for b in BASELINES:
            r = run_baseline(b, raw)
            row.append(r.bpb)
            speed[b][0] += len(raw)
            speed[b][1] += r.compress_s
        for name in strong:
            try:
                r = run_baseline(name, raw)
            except PeerFailed as exc:    # a peer's own failure: said, not a crash
                print(f"  ({exc})")
                row.append(float("nan"))
                continue
            row.append(r.bpb)
            speed[name][0] += len(raw)
            speed[name][1] += r.compress_s
        print(f"{kind:8s} {len(raw):7,d} " + " ".join(f"{v:13.3f}" for v in row), flush=True)
    print(f"{'B/s':16s} " + " ".join(f"{(n / t if t else 0):13,.0f}" for n, t in speed.values()))


if __name__ == "__main__":
    sys.exit(main())
