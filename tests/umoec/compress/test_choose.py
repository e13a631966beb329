"""The auto profile: fast or cm per file, chosen by coding a sample both ways; the file is then
exactly what that profile writes, and decodes like any other."""
import io
import random

from tests.conftest import ROOT
from tests.umoec.codec.helpers import x86_like
from umoec.codec import read_header
from umoec.codec.frames import frame_meta, frames
from umoec.compress import choose as A
from umoec.compress import profiles
from umoec.compress.api import compress_bytes, compress_frame, decompress_bytes, open_model
from umoec.compress.stream import compress_stream

TEXT = (ROOT / "umoec" / "codec" / "cm.py").read_bytes()   # source the default model knows


def table(n: int, seed: int = 1) -> bytes:
    """Rows of random hex numbers: what the mixing stage alone codes smaller (docs/models.md)."""
    rng = random.Random(seed)
    rows = (f"{rng.getrandbits(32):08x},{rng.getrandbits(32):08x}\n" for _ in range(n // 18 + 1))
    return "".join(rows).encode()[:n]


class Coder:
    """A stand-in coder whose sizes are given per profile; records what it was asked to code."""

    def __init__(self, sizes: dict):
        self.sizes, self.calls = sizes, []

    def __call__(self, data: bytes, name: str, shown: bool, x86: bool = False) -> bytes:
        self.calls.append((len(data), name, shown))
        return bytes(self.sizes[name])


def test_a_small_whole_input_keeps_the_smaller_coding_and_a_tie_goes_to_cm():
    c = Coder({"cm": 100, "fast": 99})
    got = A.choose(b"x" * 1000, object(), whole=True, code=c)
    assert (got.profile, got.coded) == ("fast", bytes(99)) and "fast 99 B, cm 100 B" in got.why
    assert c.calls == [(1000, "cm", False), (1000, "fast", True)]   # progress for the long one
    got = A.choose(b"x" * 1000, object(), whole=True, code=Coder({"cm": 99, "fast": 99}))
    assert (got.profile, got.coded) == ("cm", bytes(99))


def test_a_larger_input_is_decided_on_pieces_of_its_quarters_with_a_margin_for_the_network():
    data = bytes(range(256)) * 400                               # 100 KiB
    quarters = [data[i * 25_600:(i + 1) * 25_600] for i in range(4)]
    assert A.probe_of(data) == b"".join(q[(25_600 - 4096) // 2:][:4096] for q in quarters)
    assert len(A.probe_of(data[:A.PROBE + 3])) == A.PROBE
    assert A.probe_of(data[:5000]) == data[:5000]
    for network, want in ((94, "fast"), (95, "fast"), (96, "cm"), (120, "cm")):
        c = Coder({"cm": 100, "fast": network})
        got = A.choose(data, object(), whole=False, code=c)     # several frames: never whole
        assert got.profile == want and got.coded is None, network
        assert [n for n, _, _ in c.calls] == [A.PROBE, A.PROBE]
    got = A.choose(data[:A.WHOLE + 1], object(), whole=True, code=Coder({"cm": 100, "fast": 50}))
    assert got.profile == "fast" and got.coded is None and "sample" in got.why


def test_without_a_model_auto_is_cm():
    assert A.choose(TEXT, None, whole=True, code=None).profile == "cm"


def test_auto_writes_what_the_chosen_profile_writes_and_it_decodes():
    model = open_model()
    text, numbers = TEXT[:8_000], table(8_000)
    auto = {k: compress_bytes(d, model, profile="auto") for k, d in (("text", text), ("nums", numbers))}
    assert read_header(auto["text"]).profile == "fast"
    assert read_header(auto["nums"]).profile == "cm"
    assert auto["text"] == compress_bytes(text, model, profile="fast")
    assert auto["nums"] == compress_bytes(numbers, model, profile="cm")
    assert len(auto["nums"]) < len(compress_bytes(numbers, model, profile="fast"))
    assert decompress_bytes(auto["text"]) == text and decompress_bytes(auto["nums"]) == numbers


def test_each_frame_of_a_larger_input_is_chosen_on_its_own_and_names_the_model():
    """An archive of numbers then text: cm for the numbers' frame, fast for the text's, each
    frame exactly what that profile writes for it, and both name the model (the decoder loads
    one model for a file)."""
    model = open_model()
    data = table(24_000) + TEXT[:24_000]
    out = io.BytesIO()
    st = compress_stream(io.BytesIO(data), out, model, profile="auto", frame_bytes=24_000)
    assert (st.frames, st.frame_profiles, st.profile, st.picked) == (2, ("cm", "fast"), "fast",
                                                                     "cm+fast")
    assert st.choice == "each frame's own sample (cm 1, fast 1 of 2 frames)"
    blobs = [blob for _, blob in frames(io.BytesIO(out.getvalue()))]
    assert [read_header(b).model_hash.hex() for b in blobs] == [model.hash] * 2
    assert blobs[1] == compress_frame(TEXT[:24_000], model, profile="fast", frame=frame_meta(1, True))
    assert decompress_bytes(out.getvalue()) == data
    assert profiles.base("auto") is profiles.PROFILES[profiles.AUTO_NETWORK]
    assert "auto" in profiles.names() and "auto" not in profiles.PROFILES   # never in a header


def test_the_x86_filter_is_tried_only_on_code_and_kept_when_it_codes_smaller():
    asked = []

    def code(sample, x86):
        asked.append((len(sample), x86))
        return bytes(90 if x86 else 100)
    assert not A.x86_worth(TEXT, code) and asked == []           # text: not even tried
    data = bytes(50_000) + x86_like(30_000)
    assert A.x86_worth(data, code) and asked == [(A.PROBE, True), (A.PROBE, False)]
    assert not A.x86_worth(data, lambda sample, x86: bytes(100))   # a tie: unfiltered


def test_every_profile_filters_code_frame_by_frame_and_decodes():
    code, numbers = x86_like(40_000), table(40_000)
    blob = compress_bytes(code, None, profile="cm")
    assert read_header(blob).x86 and decompress_bytes(blob) == code
    assert len(blob) < 0.9 * len(compress_frame(code, None, profile="cm", x86=False))
    assert not read_header(compress_bytes(numbers, None, profile="cm")).x86
    out = io.BytesIO()
    st = compress_stream(io.BytesIO(numbers + code), out, None, profile="cm", frame_bytes=40_000)
    assert (st.frames, st.x86_frames) == (2, 1)
    blobs = [blob for _, blob in frames(io.BytesIO(out.getvalue()))]
    assert [read_header(b).x86 for b in blobs] == [False, True]
    assert decompress_bytes(out.getvalue()) == numbers + code
    auto = compress_stream(io.BytesIO(code[:30_000]), out := io.BytesIO(), open_model(),
                           profile="auto")
    assert auto.choice.endswith(", x86 filter") and read_header(out.getvalue()).x86
    assert auto.x86_frames == 1
    assert decompress_bytes(out.getvalue()) == code[:30_000]


def records(n: int) -> bytes:
    """Fixed-size binary records (a counter, a float, a small code): what version 15's contexts
    (bytes 2, 3-4 and 8 back) are for."""
    import struct
    return b"".join(struct.pack("<IfH2x", i * 7, i * 0.5, i % 100) for i in range(n // 12 + 1))[:n]


def test_the_cm_profile_takes_its_contexts_for_binary_data_where_they_code_smaller(monkeypatch):
    from umoec.codec.cm import BINARY, VERSION_ALONE, NoNetwork
    from umoec.codec.codec import _check_predictor
    assert A.stage_contexts(TEXT, lambda sample, binary, r: bytes(98 if binary else 100)) == (
        True, 0)
    assert A.stage_contexts(TEXT, lambda sample, binary, r: bytes(100)) == (False, 0)
    assert A.stage_contexts(TEXT, lambda sample, binary, r: bytes(995 if binary else 1000)) == (
        False, 0)
    monkeypatch.setattr(A, "record_lengths", lambda sample: [])   # (version 16: below)
    for data, version in ((records(40_000), BINARY), (TEXT[:40_000], VERSION_ALONE)):
        blob = compress_bytes(data, None, profile="cm")
        assert _check_predictor(read_header(blob), NoNetwork()) == version
        assert decompress_bytes(blob) == data
    assert len(compress_bytes(records(40_000), None, profile="cm")) < 0.97 * len(
        compress_frame(records(40_000), None, profile="cm", binary=False, record=0))


def test_the_binary_contexts_are_decided_once_per_frame_and_only_for_the_stage_alone(monkeypatch):
    """auto's cm sample and the frame coded after it take the same decision, made once; a
    profile with the network never makes it."""
    from umoec.codec.cm import BINARY, NoNetwork
    from umoec.codec.codec import _check_predictor
    from umoec.compress import api
    asked = []
    monkeypatch.setattr(api, "stage_contexts",
                        lambda data, code: asked.append(len(data)) or (True, 0))
    data = records(40_000)
    blob = compress_bytes(data, open_model(), profile="auto")  # one frame, a sample: cm
    assert asked == [40_000] and read_header(blob).profile == "cm"
    assert _check_predictor(read_header(blob), NoNetwork()) == BINARY
    assert decompress_bytes(blob) == data
    asked.clear()
    assert api.contexts_for(data, open_model(), "fast", False) == (False, 0) and asked == []
    assert api.contexts_for(data, None, "cm", False) == (True, 0) and asked == [40_000]


def fields(n: int, size: int = 20) -> bytes:
    """Records of `size` bytes: an id, a status that changes now and then, a float, a flag."""
    import struct
    rng = random.Random(7)
    rows = (struct.pack("<IHdB", 1000 + i, i // 37 % 5, rng.choice((0.5, 1.25, 8.0)) * rng.randrange(9),
                        rng.random() < 0.3).ljust(size, b"\0") for i in range(n // size + 1))
    return b"".join(rows)[:n]


def test_records_take_version_16_with_their_length_and_text_never_looks_for_one():
    from umoec.codec.cm import RECORD, NoNetwork
    from umoec.codec.codec import _check_predictor
    assert 20 in A.record_lengths(A.probe_of(fields(60_000)))
    assert A.record_lengths(A.probe_of(records(60_000)))[0] == 12
    assert A.record_lengths(TEXT) == [] and A.record_lengths(b"") == []
    # a length is taken when it codes the sample smaller than either other choice
    sizes = {(False, 0): 100, (True, 0): 95}
    pick = A.stage_contexts(fields(60_000), lambda d, b, r: bytes(sizes.get((b, r), 94)))
    assert pick == (False, 20)
    sizes[(True, 0)] = 90
    assert A.stage_contexts(fields(60_000), lambda d, b, r: bytes(sizes.get((b, r), 94))) == (
        True, 0)
    data = fields(60_000)
    blob = compress_bytes(data, None, profile="cm")
    header = read_header(blob)
    assert header.metadata["record"] == 20
    assert _check_predictor(header, NoNetwork(record=20)) == RECORD
    assert decompress_bytes(blob) == data
    assert len(blob) < 0.9 * len(compress_frame(data, None, profile="cm", binary=True, record=0))


def test_each_frame_finds_its_record_length_also_in_worker_processes():
    """Frames coded in a pool of processes (the job carries no decision: each frame makes its
    own) write the same bytes as frames coded here, and each names its record length."""
    data = fields(40_000, 20) + records(40_000)
    here = compress_bytes(data, None, profile="cm", frame_bytes=40_000)
    pooled = compress_bytes(data, None, profile="cm", frame_bytes=40_000, workers=2)
    assert pooled == here and decompress_bytes(pooled) == data
    lengths = [h.metadata.get("record") for h, _ in frames(io.BytesIO(pooled))]
    assert lengths[0] in (20, 40) and lengths[1] in (12, 24), lengths
