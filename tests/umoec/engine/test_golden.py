"""Golden files: .umc files written by format 2 / engine v1 with a committed model must decode
with every later version, and this version must write again byte for byte those its profiles
still write (made once by golden/make_golden.py; a deliberate format change adds new golden
files, it never edits these): NAME.PROFILE.umc coded with rANS, NAME.PROFILE-mix.umc with the
context-mixing stage's version 1, NAME.PROFILE-mix2.umc with its version 2, NAME.PROFILE-mix4.umc
with its version 4 (every profile; the cm profile's since), NAME.PROFILE-primed5.umc with version
5 and tiny-primed.umm (tiny.umm with a primer), NAME.PROFILE-mix6.umc and -primed7.umc with
versions 6 and 7 (the network profiles' since), NAME.PROFILE-primed8.umc and cm-primed9.umc with
versions 8 and 9 (versions 7 and 5 with 2^24 slots: what primed files got next),
NAME.cm-mix10.umc and cm-primed11.umc with versions 10 and 11 (the cm profile's since: version 4
with final mixers, and it primed), source.txt.cm-primed12.umc with version 12 (version 11 with four
more contexts), source.txt.cm-primed13.umc with version 13 (the cm profile's primed since:
version 12 with 2^25 slots), source.txt.PROFILE-primed14.umc with version 14 (the network
profiles' primed since: version 8 with version 12's contexts and 2^25 slots), format3/
binary.bin.cm-mix15.umc with version 15 (the cm profile's for binary data, which it chooses per
input), format3/records.bin.cm-mix16.umc with version 16 (its version for records of a length
the header names); only files of the versions this build writes for their profile are written
again (the cm profile's of 10, 15 and 16: those of the version it chooses for that input). All
of these are in container format 2; golden/format3/ holds files of container format 3 (the
compact header) of the versions each profile wrote then, which this build writes again byte for
byte (x86.bin's, code, through the x86 filter); of the format 2 files it writes the same blocks
under a header that says the same (`same_coding`)."""
import dataclasses
import hashlib
from pathlib import Path

import pytest

from umoec.codec import cm, read_header
from umoec.codec.container import format_of, parse_header
from umoec.compress.api import compress_bytes, decompress_bytes
from umoec.compress.profiles import PROFILES
from umoec.engine import modelfile as mf

GOLDEN = Path(__file__).with_name("golden")
FORMAT3 = "format3/"
FILES = sorted(p.relative_to(GOLDEN).as_posix() for p in GOLDEN.rglob("*.umc"))
# file suffix -> the mixing stage's version
STAGE = {"-mix.umc": 1, "-mix2.umc": 2, "-mix4.umc": 4, "-primed5.umc": 5, "-mix6.umc": 6,
         "-primed7.umc": 7, "-primed8.umc": 8, "-primed9.umc": 9, "-mix10.umc": 10,
         "-primed11.umc": 11, "-primed12.umc": 12, "-primed13.umc": 13, "-primed14.umc": 14,
         "-mix15.umc": 15, "-mix16.umc": 16}
MODEL_HASH = "97c9a95b0e53012da94a4d254735901011b2a54ba13e494597ae2a9bcedfe7fc"
PRIMED_HASH = "e1899e702b05eba9a3d728ba463ebec8503b8141269f59b7240e90223a5a7538"


def written_versions(network: bool, primed: bool) -> set[int]:
    """The stage versions this build writes for a profile (the cm profile unprimed: one of three,
    chosen by the bytes)."""
    return {cm.written(network, primed), cm.written(network, primed, True),
            cm.written(network, primed, False, 2)}


def cm_stage_written(blob: bytes, model) -> int:
    """The stage version of a file of the cm profile (found, as the decoder does, by its
    fingerprint)."""
    from umoec.codec.codec import _check_predictor
    from umoec.compress.api import stage_for
    header = read_header(blob)
    return _check_predictor(header, stage_for(header, model))


def stage_of(name: str) -> int:
    """The mixing stage's version a golden file's name says (0: rANS)."""
    return next((v for suffix, v in STAGE.items() if name.endswith(suffix)), 0)


def original_of(name: str) -> bytes:
    """The input a golden file holds (NAME.PROFILE.umc, in either folder -> NAME)."""
    return (GOLDEN / Path(name).name.rsplit(".", 2)[0]).read_bytes()


def same_coding(new: bytes, old: bytes) -> bool:
    """`new`, written by this build, holds what `old` holds: byte for byte when both are in the
    same container format; else the same blocks after headers that say the same (the fingerprint
    as far as both hold it; format 3 writes no empty input name)."""
    if format_of(new) == format_of(old):
        return new == old
    (hn, at_n), (ho, at_o) = parse_header(new), parse_header(old)
    k = min(len(hn.fingerprint), len(ho.fingerprint))

    def fields(h):
        meta = {key: v for key, v in h.metadata.items() if (key, v) != ("input_name", "")}
        return dataclasses.replace(h, fingerprint=h.fingerprint[:k], metadata=meta)
    return fields(hn) == fields(ho) and new[at_n:] == old[at_o:]


@pytest.fixture(scope="module")
def model():
    return mf.read(GOLDEN / "tiny.umm")


@pytest.fixture(scope="module")
def primed_model():
    return mf.read(GOLDEN / "tiny-primed.umm")


def test_the_golden_models_are_the_ones_pinned(model, primed_model):
    assert model.hash == MODEL_HASH and model.name == "golden-tiny"
    assert primed_model.hash == PRIMED_HASH and len(primed_model.tensors) == len(model.tensors) + 1


@pytest.mark.parametrize("name", FILES)
def test_golden_files_decode_and_are_written_again_identically(model, primed_model, name):
    stage = stage_of(name)
    if cm.is_primed(stage):
        model = primed_model
    blob = (GOLDEN / name).read_bytes()
    original = original_of(name)
    header = read_header(blob)
    network = PROFILES[header.profile].network
    named = network or cm.is_primed(stage)          # the cm profile names a model it was primed by
    assert (header.engine, header.model_hash.hex(), header.model_name) == (
        (1, model.hash, "golden-tiny") if named else (1, "00" * 32, ""))
    assert header.coder == ("cm" if stage else "rans")
    assert decompress_bytes(blob, model) == original
    if PROFILES[header.profile].coder == header.coder and \
            stage in written_versions(network, cm.is_primed(stage)):
        new = compress_bytes(original, model, profile=header.profile)
        if network or cm_stage_written(new, model) == stage:   # (cm: the same choice)
            assert same_coding(new, blob)
        else:                     # the other version, which a golden file of its own pins
            assert any(n.startswith(FORMAT3 + name.split("/")[-1].rsplit(".", 2)[0] + ".")
                       and stage_of(n) == cm_stage_written(new, model) for n in FILES), name


def test_the_x86_filter_has_golden_files_of_every_profile():
    x86 = [n for n in FILES if n.startswith(FORMAT3 + "x86.bin.")]
    assert sorted(n.split(".")[-2].split("-")[0] for n in x86) == sorted(PROFILES)
    assert all(read_header((GOLDEN / n).read_bytes()).x86 for n in x86)
    assert not any(read_header((GOLDEN / n).read_bytes()).x86 for n in FILES if n not in x86)


def test_every_version_this_build_writes_has_golden_files():
    """A stage version new files get (each profile, primed or not) is pinned by a golden file
    of that profile in the container format it writes, so the test above writes it again byte
    for byte."""
    for profile, p in PROFILES.items():
        for primed in (False, True):
            for version in written_versions(p.network, primed):
                assert any(stage_of(n) == version and n.split(".")[-2].startswith(profile + "-")
                           and n.startswith(FORMAT3) for n in FILES), (profile, primed, version)


def test_the_golden_files_are_pinned():
    pins = {"": (9, "f9451d67ffa2630b"), "-mix.umc": (12, "2e259c4321065ef4"),
            "-mix2.umc": (12, "e0f0e44a55ba4b15"), "-mix4.umc": (12, "1bbfbaaf78c82c22"),
            "-primed5.umc": (3, "7e6fa430c836e1bf"), "-mix6.umc": (9, "cb9582505bb9bd01"),
            "-primed7.umc": (3, "def4a403f6ec87d8"), "-primed8.umc": (3, "ebb65b06c5183b58"),
            "-primed9.umc": (1, "591a0cbcb3707ac6"), "-mix10.umc": (3, "b03bc5c9206e33b9"),
            "-primed11.umc": (1, "6f0ccbff50c5d40a"), "-primed12.umc": (1, "594401ff5be6d1fa"),
            "-primed13.umc": (1, "5943da0a6e847594"), "-primed14.umc": (3, "62940c4f8ca840c8"),
            FORMAT3: (22, "b2a0082120c66ecc")}
    for suffix, pin in pins.items():
        files = [n for n in FILES if n.startswith(FORMAT3)] if suffix == FORMAT3 else [
            n for n in FILES if not n.startswith(FORMAT3)
            and (n.endswith(suffix) if suffix else not n.endswith(tuple(STAGE)))]
        digest = hashlib.sha256(b"".join((GOLDEN / n).read_bytes() for n in files)).hexdigest()
        assert (len(files), digest[:16]) == pin, suffix


def test_decoding_needs_no_torch(tmp_path):
    """A decoder installs and runs without the trainer: decoding a golden file through the
    command line never imports torch (nor the training code)."""
    import subprocess
    import sys

    from tests.conftest import ROOT
    code = ("import sys; from pathlib import Path; from umoec.compress.api import decompress_path; "
            f"decompress_path(Path({str(GOLDEN / 'source.txt.balanced.umc')!r}), "
            f"Path({str(tmp_path / 'out')!r}), {str(GOLDEN / 'tiny.umm')!r}); "
            "print(sorted(m for m in sys.modules if m == 'torch' or m.startswith('umoec.train')))")
    res = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "[]"
    assert (tmp_path / "out").read_bytes() == (GOLDEN / "source.txt").read_bytes()
