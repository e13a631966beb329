"""A model trained for one domain against the strong classical compressors *primed* with the same
training text: the fair comparison for a compressor that learned from that text.

Per domain (BENCH_DOMAINS, default "python"; also "prose"): whole files of a fresh machine, in a
seeded shuffle, fill a training text (BENCH_TRAIN_BYTES, default 2,000,000) and then a test text
of other files (BENCH_TEST_BYTES, default 500,000). tier1_micro trains on the training text for
BENCH_TRAIN_SECONDS (default 900: 30 CPU-minutes on 2 cores), the checkpoint is exported to a
coding model, and the test text is coded with every network profile and the cm profile (each
checked to round-trip), then every network profile again with the model *primed*: the training
text stored in the model file as its primer (umoec/engine/primer.py), which the mixing stage
learns before each file (its speeds include that pass: the per-process cache is cleared before
each timed call). Next to them the installed peers plain and primed: size(train + test) -
size(train), the code length of the test text for a decoder that already knows the training
text (umoec/codec/baselines.run_primed). Prints one table per domain: bpb, compress and
decompress bytes/s (a primed peer's speed is its plain one), and our best row's distance to
each primed peer (+: ours is larger); "cm primed" is the stage primed with the training text and
no network (the file names the primed model). Numbers, not
pass/fail; run with nothing else on the machine (training is time-boxed, so a busy machine gets
fewer steps).

    python domains                      files
    python   the standard library's .py (sysconfig's stdlib folder, tests included)
    prose    English text of /usr/share/doc (README*, *.txt, changelogs; gzip read through) and
             /usr/share/common-licenses
"""
from __future__ import annotations

import gzip
import os
import random
import sysconfig
import tempfile
import time
from pathlib import Path

from bench.bench_compress import train_tier1
from umoec import units
from umoec.codec import cm
from umoec.codec.baselines import available, run_baseline, run_primed
from umoec.compress.api import compress_bytes, decompress_bytes, export_for
from umoec.data import prepare
from umoec.engine import primer

SEED = 20261202
PRIMED = ("PPMd -o16", "zpaq -m5", "xz -9e", "paq9a", "bzip3")
PROFILES = ("turbo", "fast", "balanced", "cm")


def _python_files() -> list[Path]:
    return sorted(Path(sysconfig.get_paths()["stdlib"]).rglob("*.py"))


def _prose_files() -> list[Path]:
    doc = Path("/usr/share/doc")
    out = [p for p in doc.rglob("*") if p.is_file() and (
        p.name.lower().startswith(("readme", "changelog", "news")) or p.suffix in (".txt",))]
    lic = Path("/usr/share/common-licenses")
    out += [p for p in lic.iterdir() if p.is_file()] if lic.is_dir() else []
    return sorted(set(out))


DOMAINS = {"python": _python_files, "prose": _prose_files}


def _read(path: Path) -> bytes:
    try:
        raw = path.read_bytes()
        if path.suffix == ".gz":
            raw = gzip.decompress(raw)
    except (OSError, EOFError, gzip.BadGzipFile):
        return b""
    return b"" if b"\0" in raw[:8192] else raw


def split_domain(files: list[Path], train_bytes: int, test_bytes: int) -> tuple[bytes, bytes, int]:
    """Whole files in a seeded shuffle: the training text, then a test text of other files
    (the last file cut to size). -> (train, test, files used)."""
    order = list(files)
    random.Random(SEED).shuffle(order)
    train, test, used = bytearray(), bytearray(), 0
    for path in order:
        raw = _read(path)
        if not raw:
            continue
        used += 1
        if len(train) < train_bytes:
            train += raw[:train_bytes - len(train)]
        elif len(test) < test_bytes:
            test += raw[:test_bytes - len(test)]
        else:
            break
    return bytes(train), bytes(test), used


def _row(name: str, bpb: float, c: float | None, d: float | None, note: str = "") -> None:
    speeds = f"{c:13,.0f} {d:15,.0f}" if c is not None else f"{'':13s} {'':15s}"
    print(f"{name:22s} {bpb:7.3f} {speeds}  {note}", flush=True)


def domain(name: str, seconds: float, train_bytes: int, test_bytes: int) -> None:
    train, test, used = split_domain(DOMAINS[name](), train_bytes, test_bytes)
    if len(test) < test_bytes // 2:
        print(f"{name}: only {len(train) + len(test):,} bytes of this kind here; skipped")
        return
    with tempfile.TemporaryDirectory(prefix=f"bench-domain-{name}-") as t:
        tmp = Path(t)
        (tmp / "train.txt").write_bytes(train)
        data = tmp / "data"
        prepare(data, [tmp / "train.txt"])
        t0 = time.perf_counter()
        ckpt = train_tier1(tmp, data, seconds)
        steps = int(ckpt.stem.removeprefix("step"))
        trained = time.perf_counter() - t0
        model = export_for(ckpt)
        print(f"\n{name}: train {len(train):,} B, test {len(test):,} B ({used} files); "
              f"tier1_micro {steps:,} steps in {trained:,.0f} s; coding model {model.label()}")
        print(f"{'method':22s} {'bpb':>7s} {'compress B/s':>13s} {'decompress B/s':>15s}")
        primed_model = primer.attach(model, train)
        best = None
        runs = [(f"umc {p}", p, model) for p in PROFILES]
        runs += [(f"umc {p} primed", p, primed_model) for p in PROFILES]   # cm: primer, no network
        for label, prof, m in runs:
            cm.forget()                   # every timed call pays its priming, as a new process
            c0 = time.perf_counter()
            blob = compress_bytes(test, m, profile=prof)
            c1 = time.perf_counter()
            cm.forget()
            ok = decompress_bytes(blob, m) == test
            d1 = time.perf_counter()
            bpb = units.bpb(len(blob), len(test))
            _row(label, bpb, len(test) / (c1 - c0), len(test) / (d1 - c1),
                 "" if ok else "ROUND TRIP FAILED")
            if ok and (best is None or bpb < best[1]):
                best = (label.removeprefix("umc "), bpb)
        installed = available()
        for peer in PRIMED:
            if peer not in installed:
                print(f"{peer:22s} not installed")
                continue
            plain = run_baseline(peer, test)
            _row(peer, plain.bpb, plain.compress_bytes_per_s, plain.decompress_bytes_per_s)
            primed = run_primed(peer, train, test)
            gap = (best[1] / primed.bpb - 1) * 100 if best else float("nan")
            # no speeds: a primed peer codes the training text too (its own speed is the plain one)
            _row(f"{peer} primed", primed.bpb, None, None,
                 f"umc {best[0]} {'+' if gap >= 0 else ''}{gap:.1f}%" if best else "")


def main() -> None:
    seconds = float(os.environ.get("BENCH_TRAIN_SECONDS", "900"))
    train_bytes = int(os.environ.get("BENCH_TRAIN_BYTES", "2000000"))
    test_bytes = int(os.environ.get("BENCH_TEST_BYTES", "500000"))
    for name in os.environ.get("BENCH_DOMAINS", "python").split(","):
        if name not in DOMAINS:
            raise SystemExit(f"BENCH_DOMAINS: unknown domain {name!r}; choose from {', '.join(DOMAINS)}")
        domain(name, seconds, train_bytes, test_bytes)


if __name__ == "__main__":
    main()
