"""Fuzzing real neural .umc files: every case ends in the right bytes or a clear CodecError,
within a time bound, with bounded memory, and leaves no output behind when it fails.

The files are made by `compress_path` with the coding model of a tiny trained checkpoint, in six
shapes: turbo, fast with small blocks and probability sharpening, balanced with online
adaptation, tANS, 64-bit rANS at prob_precision 24, and an empty input. Every case goes through
`decompress_path` (the API of bin.decompress and the cockpit's verify worker): header, metadata,
model lookup by hash (the model is on UMOEC_MODEL_PATH), fingerprint, engine, coder, sha256,
atomic write.

Case families (CI / UMOEC_RELIABILITY_FULL=1):
  mutations   byte edits, insertions, deletions, truncation, appended junk        80 / 3000
  payloads    payload bytes edited, block CRCs recomputed: the model and coder run   15 / 400
  header      header bytes edited, header CRC recomputed                           40 / 1000
  metadata    metadata JSON values replaced, header CRC recomputed                 60 / 1200
  seeded      classic mutation loop: bit flips, splices of two files, zeroed runs  150 / 5000
The existing container fuzzing (tests/umoec/codec/test_container.py) does the same on small
synthetic files with a toy predictor; this suite adds the real model and the real file path.
"""
from __future__ import annotations

import copy
import os
import random
import resource
import subprocess
import time
import tracemalloc
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path

import psutil
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import ROOT
from tests.reliability.conftest import FULL, full_or_ci, record
from tests.reliability.helpers import ONE_THREAD, PYTHON
from tests.umoec.codec.test_container import mutate, mutation, with_block_crcs, with_header_crc
from umoec import config as C
from umoec.codec import CodecError
from umoec.codec.container import pack_header, parse_header
from umoec.compress import api
from umoec.engine import modelfile as mf

CASES = {"mutations": full_or_ci(3000, 80), "payloads": full_or_ci(400, 15),
         "header": full_or_ci(1000, 40), "metadata": full_or_ci(1200, 60),
         "seeded": full_or_ci(5000, 150)}
CLI_CASES = full_or_ci(20, 1)
TIME_BOUND_S = 30.0             # per case: a clear answer within this (the worst seen: record)
PY_PEAK_BOUND = 86 << 20        # tracemalloc peak per case (Python + numpy allocations): see below
RSS_GROWTH_BOUND = 400 << 20    # resident memory growth over a whole family
FUZZ = dict(deadline=None, suppress_health_check=list(HealthCheck), database=None)
# What one decode of these files allocates whatever its header says: the mixing stage's tables
# (version 4: counters 16 MiB, check bytes and bit histories 8, APMs and maps 16.5, match
# positions 8), the byte match model's two hash tables (16 MiB of zeroed pages, untouched until
# written) and the model (~3 MiB): 78.8 MiB at worst, 80.2 once in a full parallel run (a header
# edit, 78 when hypothesis ran the same case again). A header that makes the decoder allocate by
# its claims goes far past the bound.


@dataclass(frozen=True)
class Sample:
    name: str
    original: bytes
    blob: bytes


@dataclass
class Tally:
    outcomes: Counter
    worst_s: float = 0.0
    worst_peak: float = 0.0
    cases: int = 0
    control_chars: int = 0      # refusals whose message holds a newline/ESC taken from the file


TALLIES: dict[str, Tally] = {}


# -- the real files --------------------------------------------------------------------------
SHAPES = [  # name, profile, input, settings
    ("turbo", "turbo", "text2000", []),
    ("fast-sharpened", "fast", "text600", ["entropy.block_size=512",
                                            "entropy.probability_sharpening=true"]),
    ("balanced-adapt", "balanced", "text700", ["entropy.block_size=512"]),
    ("tans", "fast", "binary600", ["entropy.coder=tans", "entropy.prob_precision=12",
                                    "entropy.block_size=512"]),
    ("rans64", "turbo", "text1000b", ["entropy.precision=64", "entropy.prob_precision=24"]),
    ("empty", "turbo", "empty", []),
]


@pytest.fixture(scope="module")
def checkpoint(tiny_run) -> Path:
    return tiny_run / "checkpoints" / "step000008.pt"


@pytest.fixture(scope="module")
def model_dir(checkpoint, tmp_path_factory) -> Path:
    """The checkpoint's coding model, alone in a folder on the model search path."""
    folder = tmp_path_factory.mktemp("models")
    mf.write(api.export_for(checkpoint), folder / "tiny.umm")
    return folder


@pytest.fixture(scope="module")
def samples(model_dir, small_data, tmp_path_factory) -> list[Sample]:
    text = (small_data / "val.bin").read_bytes()
    # fast and balanced code these in one stream (a step per byte): each holds two blocks
    inputs = {"text2000": text[:2000], "text600": text[:600], "text700": text[5000:5700],
              "text1000b": text[9000:10000], "binary600": random.Random(7).randbytes(600),
              "empty": b""}
    model = mf.read(model_dir / "tiny.umm")
    base = model.build_config()
    folder = tmp_path_factory.mktemp("umc")
    out = []
    for name, profile, which, sets in SHAPES:
        cfg = C.build(C.apply_overrides(C.to_dict(base), sets), name) if sets else None
        src, umc = folder / f"{name}.in", folder / f"{name}.umc"
        src.write_bytes(inputs[which])
        api.compress_path(src, umc, model, config=cfg, profile=profile)
        out.append(Sample(name, inputs[which], umc.read_bytes()))
    return out


@pytest.fixture(scope="module")
def cached_loads(model_dir):
    """Decoding finds the model by hash on the search path: only that folder, no runs folder."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("UMOEC_MODEL_PATH", str(model_dir))
        mp.setenv("UMOEC_RUNS_DIR", str(model_dir / "no-runs"))
        yield


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("umc-cases")


def decode_case(family: str, blob: bytes, originals: set, workdir: Path) -> str:
    """Decode one case through decompress_path; check the outcome, time and memory bounds."""
    tally = TALLIES.setdefault(family, Tally(Counter()))
    src, out = workdir / "case.umc", workdir / "out.bin"
    src.write_bytes(blob)
    out.unlink(missing_ok=True)
    tracemalloc.start()
    t0 = time.perf_counter()
    try:
        api.decompress_path(src, out)
        outcome = "decoded"
        assert out.read_bytes() in originals, "decoded to bytes that are not the original"
    except CodecError as exc:
        outcome = type(exc).__name__
        message = str(exc)
        assert message.strip() and "Traceback" not in message
        if any(c in message.strip() for c in "\n\r\x1b"):  # echoed from the file (see report)
            tally.control_chars += 1
        assert not out.exists(), "a failed decode left an output file"
    finally:
        elapsed = time.perf_counter() - t0
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    leftovers = sorted(p.name for p in workdir.iterdir() if p.name not in ("case.umc", "out.bin"))
    assert leftovers == [], f"temp files left: {leftovers}"
    assert elapsed < TIME_BOUND_S, f"{elapsed:.1f} s for one case"
    assert peak < PY_PEAK_BOUND, f"peak {peak / 2**20:.1f} MiB"
    tally.outcomes[outcome] += 1
    tally.cases += 1
    tally.worst_s = max(tally.worst_s, elapsed)
    tally.worst_peak = max(tally.worst_peak, peak)
    return outcome


@pytest.fixture(scope="module", autouse=True)
def rss_guard_and_report():
    """Resident memory must not grow without bound over the module; record the tallies."""
    proc = psutil.Process()
    start, t0 = proc.memory_info().rss, time.monotonic()
    yield
    growth = proc.memory_info().rss - start
    total = sum(t.cases for t in TALLIES.values())
    record("umc_fuzz", {
        "cases": total, "seconds": round(time.monotonic() - t0, 1),
        "rss_growth_mib": round(growth / 2**20, 1),
        "max_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "families": {k: {"cases": t.cases, "outcomes": dict(t.outcomes),
                         "worst_s": round(t.worst_s, 3),
                         "worst_py_peak_mib": round(t.worst_peak / 2**20, 2),
                         "messages_with_control_characters": t.control_chars}
                     for k, t in TALLIES.items()}})
    assert growth < RSS_GROWTH_BOUND, f"RSS grew {growth / 2**20:.0f} MiB"


def originals_of(samples) -> set:
    return {s.original for s in samples}


def test_every_real_file_decodes_exactly(samples, cached_loads, workdir):
    for s in samples:
        assert decode_case("unmodified", s.blob, {s.original}, workdir) == "decoded", s.name


# -- hypothesis families -----------------------------------------------------------------------
@pytest.mark.slow
def test_mutated_neural_files(samples, cached_loads, workdir):
    @settings(max_examples=CASES["mutations"], **FUZZ)
    @given(st.sampled_from(samples), st.lists(mutation, min_size=1, max_size=4))
    def case(sample, ops):
        decode_case("mutations", mutate(sample.blob, ops), originals_of(samples), workdir)
    case()


@pytest.mark.slow
def test_payload_edits_behind_valid_block_crcs(samples, cached_loads, workdir):
    """The CRCs pass, so the model and the coder run on corrupted payloads until they refuse."""
    with_payload = [s for s in samples if s.original]

    @settings(max_examples=CASES["payloads"], **FUZZ)
    @given(st.sampled_from(with_payload),
           st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), min_size=1,
                    max_size=6))
    def case(sample, edits):
        _, offset = parse_header(sample.blob)
        b = bytearray(sample.blob)
        for pos, value in edits:
            b[offset + pos % (len(b) - offset)] = value
        decode_case("payloads", with_block_crcs(bytes(b)), originals_of(samples), workdir)
    case()


@pytest.mark.slow
def test_header_edits_behind_a_valid_header_crc(samples, cached_loads, workdir):
    @settings(max_examples=CASES["header"], **FUZZ)
    @given(st.sampled_from(samples), st.lists(st.tuples(st.integers(8, 10**6), st.integers(0, 255)),
                                              min_size=1, max_size=4))
    def case(sample, edits):
        _, offset = parse_header(sample.blob)
        b = bytearray(sample.blob)
        for pos, value in edits:
            b[8 + pos % (offset - 12)] = value  # anything but the magic and the CRC itself
        decode_case("header", with_header_crc(bytes(b)), originals_of(samples), workdir)
    case()


json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-2**64, 2**64), st.floats(),
              st.text(max_size=20), st.sampled_from(["", "AAAA", "../../etc/passwd", "turbo",
                                                     "/dev/zero", "1e999", "nan"])),
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(st.text(max_size=12), inner, max_size=4)),
    max_leaves=8)


@st.composite
def metadata_edits(draw, samples):
    sample = draw(st.sampled_from(samples))
    header, offset = parse_header(sample.blob)
    meta = copy.deepcopy(header.metadata)
    for _ in range(draw(st.integers(1, 3))):
        keys = sorted(meta) + ["extra"]
        key = draw(st.sampled_from(keys))
        action = draw(st.sampled_from(["replace", "delete", "nested"]))
        if action == "delete":
            meta.pop(key, None)
        elif action == "nested" and isinstance(meta.get(key), dict) and meta[key]:
            inner = draw(st.sampled_from(sorted(meta[key])))
            meta[key][inner] = draw(json_values)
        else:
            meta[key] = draw(json_values)
    try:
        blob = pack_header(replace(header, metadata=meta)) + sample.blob[offset:]
    except CodecError:  # e.g. metadata over 64 KiB: the writer refuses it
        blob = sample.blob
    return blob


@pytest.mark.slow
def test_metadata_edits_behind_a_valid_header_crc(samples, cached_loads, workdir):
    @settings(max_examples=CASES["metadata"], **FUZZ)
    @given(metadata_edits(samples))
    def case(blob):
        decode_case("metadata", blob, originals_of(samples), workdir)
    case()


# -- classic seeded mutation -------------------------------------------------------------------
def seeded_mutation(rng: random.Random, samples) -> bytes:
    a = bytearray(rng.choice(samples).blob)
    how = rng.choice(["flip", "bytes", "zero", "dup", "cut", "splice", "swap"])
    n = len(a)
    i, j = sorted((rng.randrange(n), rng.randrange(n)))
    if how == "flip":
        for _ in range(rng.randint(1, 8)):
            k = rng.randrange(n)
            a[k] ^= 1 << rng.randrange(8)
    elif how == "bytes":
        for _ in range(rng.randint(1, 8)):
            a[rng.randrange(n)] = rng.choice([0, 0xFF, 0x7F, 0x80, rng.randrange(256)])
    elif how == "zero":
        a[i:j + 1] = bytes(j + 1 - i)
    elif how == "dup":
        a[j:j] = a[i:j + 1]
    elif how == "cut":
        del a[i:j + 1]
    elif how == "splice":
        b = rng.choice(samples).blob
        a = a[:i] + b[rng.randrange(len(b)):]
    else:
        a[i:j + 1] = bytes(reversed(a[i:j + 1]))
    return bytes(a)


@pytest.mark.slow
def test_seeded_mutation_loop(samples, cached_loads, workdir):
    rng = random.Random(10_000 if FULL else 300)
    for _ in range(CASES["seeded"]):
        decode_case("seeded", seeded_mutation(rng, samples), originals_of(samples), workdir)


# -- through the command line ------------------------------------------------------------------
@pytest.mark.slow
def test_bin_decompress_refuses_mutated_files_with_one_line(samples, tmp_path, model_dir):
    rng = random.Random(77)
    for i in range(CLI_CASES):
        umc, out = tmp_path / f"bad{i}.umc", tmp_path / f"out{i}.bin"
        s = rng.choice([s for s in samples if s.original])
        _, offset = parse_header(s.blob)
        b = bytearray(s.blob)
        b[offset + rng.randrange(len(b) - offset)] ^= 0xFF  # a payload byte: CRC mismatch
        umc.write_bytes(bytes(b))
        res = subprocess.run([PYTHON, "-m", "bin.decompress", str(umc), str(out)], cwd=ROOT,
                             capture_output=True, text=True, timeout=300,
                             env={**os.environ, **ONE_THREAD,
                                  "UMOEC_MODEL_PATH": str(model_dir)})
        lines = res.stderr.strip().splitlines()
        assert res.returncode == 2 and len(lines) == 1 and "CRC" in lines[0], res.stderr
        assert not out.exists() and "Traceback" not in res.stderr


# -- metadata of the wrong type (these escaped as TypeError/AttributeError until fixed) ----------
@pytest.mark.parametrize("key,value", [
    ("globals", 5), ("globals", None), ("globals", "@@"), ("globals", "AAAA"),
    ("match_min_len", "x"), ("match_min_len", None), ("match_min_len", 10 ** 9),
    ("adapt_rate", [1, 2]), ("adapt_rate", -3),
])
def test_metadata_of_the_wrong_type_is_a_codec_error(samples, cached_loads, workdir, key, value):
    """A header with a valid CRC but a wrong-typed metadata value: refused as a CodecError."""
    sample = samples[0]
    header, offset = parse_header(sample.blob)
    blob = pack_header(replace(header, metadata={**header.metadata, key: value}))
    assert decode_case("typed-metadata", blob + sample.blob[offset:], {sample.original},
                       workdir) != "decoded"
