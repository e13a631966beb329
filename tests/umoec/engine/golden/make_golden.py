"""How the golden files were made (run once; never rerun unless the format changes on purpose).

    python tests/umoec/engine/golden/make_golden.py CHECKPOINT     # tiny.umm + the rANS files
    python tests/umoec/engine/golden/make_golden.py --mix          # the mixing stage, version 1
    python tests/umoec/engine/golden/make_golden.py --mix2         # the mixing stage, version 2
    python tests/umoec/engine/golden/make_golden.py --mix4         # the mixing stage, version 4
    python tests/umoec/engine/golden/make_golden.py --primed5      # version 5: tiny-primed.umm
    python tests/umoec/engine/golden/make_golden.py --mix6         # version 6 (network profiles)
    python tests/umoec/engine/golden/make_golden.py --primed7      # version 7 (network, primed)
    python tests/umoec/engine/golden/make_golden.py --primed8      # version 8 (network, primed)
    python tests/umoec/engine/golden/make_golden.py --primed9      # version 9 (cm profile, primed)
    python tests/umoec/engine/golden/make_golden.py --mix10        # version 10 (cm profile)
    python tests/umoec/engine/golden/make_golden.py --primed11      # version 11 (cm profile, primed)
    python tests/umoec/engine/golden/make_golden.py --primed12      # version 12 (cm profile, primed)
    python tests/umoec/engine/golden/make_golden.py --primed13      # version 13 (cm profile, primed)
    python tests/umoec/engine/golden/make_golden.py --primed14      # version 14 (network, primed)
    python tests/umoec/engine/golden/make_golden.py --format3       # container format 3
    python tests/umoec/engine/golden/make_golden.py --x86           # the x86 filter (format 3)
    python tests/umoec/engine/golden/make_golden.py --binary        # version 15 (cm, binary data)
    python tests/umoec/engine/golden/make_golden.py --record        # version 16 (cm, records)

CHECKPOINT: a tiny tier1-family checkpoint (tests/umoec/train/conftest.py TINY, 80 steps on the
400 kB default corpus). The first form wrote tiny.umm (its coding model), three inputs (Python
text, binary, empty) and their .umc files for every profile of the time, all coded with rANS
(NAME.PROFILE.umc). The second writes, with that tiny.umm, the files of every profile of the
context-mixing stage (coder cm, version 1: NAME.PROFILE-mix.umc); the third the same with its
version 2 (check bytes, the match model: NAME.PROFILE-mix2.umc), the fourth with its version 4
(bit histories, three more contexts, mixers by byte classes, two APMs: NAME.PROFILE-mix4.umc).
test_golden.py requires that every later version decodes all of them, and writes again byte for
byte those whose profile still codes with the coder their header names. The fifth writes
tiny-primed.umm (tiny.umm with 6,000 bytes of rans.py as its primer) and, with it, source.txt
for every network profile with the primed stage, version 5 (NAME.PROFILE-primed5.umc). The
sixth and seventh write the network profiles' files of version 6 (final mixers weigh the context
mixers against the network: NAME.PROFILE-mix6.umc) and of version 7, version 6 primed with
tiny-primed.umm (NAME.PROFILE-primed7.umc); the cm profile still writes versions 4 and 5.
The eighth and ninth write source.txt primed with tiny-primed.umm in the versions with 2^24 slots:
version 8 for the network profiles (NAME.PROFILE-primed8.umc), version 9 for the cm profile
(NAME.cm-primed9.umc, the first golden file of the cm profile primed). The last two write the cm
profile's files of version 10 (version 4 with version 6's final mixers: NAME.cm-mix10.umc, every
input) and of version 11, version 10 primed with tiny-primed.umm (source.txt.cm-primed11.umc);
then version 12, version 11 with four more contexts (source.txt.cm-primed12.umc), and version
13, version 12 with 2^25 slots (source.txt.cm-primed13.umc); and the network profiles' version
14, version 8 with version 12's contexts and 2^25 slots (source.txt.PROFILE-primed14.umc).
Every file above is in container format 2. The last form writes format3/: container format 3
(the compact header) with the stage versions each profile then wrote, every input unprimed
(NAME.PROFILE-mix6.umc, NAME.cm-mix10.umc) and source.txt primed (source.txt.PROFILE-primed14.umc,
source.txt.cm-primed13.umc). --x86 writes x86.bin (bytes shaped like x86 code: calls to a few
functions) and format3/x86.bin.PROFILE-mixV.umc for every profile, each through the x86 filter.
--binary writes format3/binary.bin.cm-mix15.umc: the cm profile's version 15 (version 10 with
contexts for binary data), which it chooses for binary.bin. --record writes records.bin (rows of
12 bytes: a counter, a float, a code) and format3/records.bin.cm-mix16.umc: the cm profile's
version 16 (version 15 with contexts for records), which it chooses for it.
"""
import sys
from pathlib import Path

from umoec.compress.api import compress_bytes
from umoec.compress.profiles import PROFILES
from umoec.engine import modelfile as mf
from umoec.engine.export import export_checkpoint

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[3]


def inputs() -> dict[str, bytes]:
    text = (ROOT / "umoec" / "codec" / "rans.py").read_bytes()[:3000]
    binary = bytes((i * i * 7 + 3) % 256 for i in range(1200)) + bytes(300) + b"\xff" * 100
    return {"source.txt": text, "binary.bin": binary, "empty": b""}


def mix(suffix: str, network_only: bool = False, alone_only: bool = False) -> None:
    model = mf.read(HERE / "tiny.umm")
    for name, data in inputs().items():
        assert (HERE / name).read_bytes() == data
        for profile in PROFILES:
            if (network_only and not PROFILES[profile].network) or (
                    alone_only and PROFILES[profile].network):
                continue
            (HERE / f"{name}.{profile}{suffix}.umc").write_bytes(compress_bytes(data, model,
                                                                               profile=profile))


def primed(suffix: str) -> None:
    if suffix == "-primed5":
        from umoec.engine import primer
        model = primer.attach(mf.read(HERE / "tiny.umm"), PRIMER())
        mf.write(model, HERE / "tiny-primed.umm")
    model = mf.read(HERE / "tiny-primed.umm")
    data = (HERE / "source.txt").read_bytes()
    # the cm profile's versions; the others are the network profiles'
    alone = suffix in ("-primed9", "-primed11", "-primed12", "-primed13")
    for profile, p in PROFILES.items():
        if p.network != alone:
            (HERE / f"source.txt.{profile}{suffix}.umc").write_bytes(
                compress_bytes(data, model, profile=profile))


def format3() -> None:
    from umoec.codec import cm
    out = HERE / "format3"
    out.mkdir(exist_ok=True)
    tiny, primed_model = mf.read(HERE / "tiny.umm"), mf.read(HERE / "tiny-primed.umm")
    for profile, p in PROFILES.items():
        for name, data in inputs().items():
            version = cm.written(p.network, False)
            (out / f"{name}.{profile}-mix{version}.umc").write_bytes(
                compress_bytes(data, tiny, profile=profile))
        version = cm.written(p.network, True)
        (out / f"source.txt.{profile}-primed{version}.umc").write_bytes(
            compress_bytes(inputs()["source.txt"], primed_model, profile=profile))


def x86_input() -> bytes:
    """Runs of a few instruction bytes between E8 calls to eight functions (displacements
    relative to the next instruction, as a compiler writes them)."""
    import random
    rng = random.Random(7)
    targets = [rng.randrange(1 << 20) for _ in range(8)]
    out = bytearray()
    while len(out) < 3000:
        out += bytes(rng.choice(b"\x48\x89\xc7\x8b\x45\xf8\x31\xc0\x5d\xc3\x55\x53")
                     for _ in range(rng.randrange(3, 10)))
        out += b"\xe8" + (rng.choice(targets) - len(out) - 5).to_bytes(4, "little", signed=True)
    return bytes(out[:3000])


def x86() -> None:
    from umoec.codec import cm, read_header
    data = x86_input()
    (HERE / "x86.bin").write_bytes(data)
    tiny = mf.read(HERE / "tiny.umm")
    for profile, p in PROFILES.items():
        blob = compress_bytes(data, tiny, profile=profile)
        assert read_header(blob).x86
        (HERE / "format3" / f"x86.bin.{profile}-mix{cm.written(p.network, False)}.umc").write_bytes(blob)


def binary() -> None:
    from umoec.codec import read_header
    from umoec.codec.cm import BINARY, NoNetwork
    from umoec.codec.codec import _check_predictor
    blob = compress_bytes(inputs()["binary.bin"], mf.read(HERE / "tiny.umm"), profile="cm")
    assert _check_predictor(read_header(blob), NoNetwork()) == BINARY
    (HERE / "format3" / f"binary.bin.cm-mix{BINARY}.umc").write_bytes(blob)


def records_input() -> bytes:
    """Rows of 12 bytes (a counter, a float, a code of two values, two zero bytes)."""
    import struct
    return b"".join(struct.pack("<IfH2x", i * 7, i * 0.25, (i * 2654435761 >> 13) % 3)
                    for i in range(250))


def record() -> None:
    from umoec.codec import read_header
    from umoec.codec.cm import RECORD, NoNetwork
    from umoec.codec.codec import _check_predictor
    data = records_input()
    (HERE / "records.bin").write_bytes(data)
    blob = compress_bytes(data, mf.read(HERE / "tiny.umm"), profile="cm")
    record = read_header(blob).metadata["record"]       # (a multiple of 12 codes as well)
    assert record % 12 == 0 and _check_predictor(read_header(blob), NoNetwork(record=record)) == RECORD
    (HERE / "format3" / f"records.bin.cm-mix{RECORD}.umc").write_bytes(blob)


def PRIMER() -> bytes:
    return (ROOT / "umoec" / "codec" / "rans.py").read_bytes()[3000:9000]


def main(checkpoint: str) -> None:
    model = export_checkpoint(Path(checkpoint), name="golden-tiny",
                              description="golden-file model of the test suite")
    model.info["created"] = "2026-12-01"
    mf.write(model, HERE / "tiny.umm")
    for name, data in inputs().items():
        (HERE / name).write_bytes(data)
        for profile in PROFILES:
            (HERE / f"{name}.{profile}.umc").write_bytes(compress_bytes(data, model,
                                                                        profile=profile))


if __name__ == "__main__":
    if sys.argv[1] == "--format3":
        format3()
    elif sys.argv[1] == "--x86":
        x86()
    elif sys.argv[1] == "--binary":
        binary()
    elif sys.argv[1] == "--record":
        record()
    elif sys.argv[1] in ("--primed5", "--primed7", "--primed8", "--primed9", "--primed11", "--primed12",
                       "--primed13", "--primed14"):
        primed(sys.argv[1][1:])
    elif sys.argv[1] in ("--mix", "--mix2", "--mix4", "--mix6", "--mix10"):
        mix(sys.argv[1][1:], network_only=sys.argv[1] == "--mix6",
            alone_only=sys.argv[1] == "--mix10")
    else:
        main(sys.argv[1])
