"""The context-mixing stage: the compiled loop equals the plain reference bit for bit (coded bytes
and every learned table), both decode what either wrote, damage is caught, and the model-free cm
profile needs no model file."""
import hashlib

import numpy as np
import pytest

from tests.umoec.codec.helpers import TEXT, pseudo_random_bytes
from umoec.codec import cm, read_header
from umoec.codec.errors import DecodeMismatch, FormatError


def streams_of(data: bytes, lanes: int):
    """(T, lanes) bytes and per-step counts that shrink at the end, as the codec's layout does."""
    T = -(-len(data) // lanes)
    m = np.zeros((T, lanes), dtype=np.uint8)
    flat = np.frombuffer(data.ljust(T * lanes, b"\0"), dtype=np.uint8)
    m[:] = flat.reshape(lanes, T).T
    counts = np.full(T, lanes, dtype=np.int64)
    counts[-3:] = [lanes - 1, lanes - 1, lanes - 2]
    for t in range(T):
        m[t, counts[t]:] = 0
    return m, counts


def network_cum(T: int, lanes: int, seed: int = 0) -> np.ndarray:
    f = np.random.default_rng(seed).integers(1, 400, (T, lanes, 256))
    cum = np.zeros((T, lanes, 257), dtype=np.int64)
    cum[:, :, 1:] = np.cumsum(f, axis=-1)
    return cum


REC = 12                      # version 16's record length in these tests


def state(lanes: int, network: bool, steps: int, version: int) -> cm.CMState:
    return cm.CMState(lanes, network, steps, version, record=REC if version == cm.RECORD else 0)


def encode(data, counts, cum, impl, monkeypatch, per_step, version=cm.VERSION):
    if impl == "python":
        monkeypatch.setattr(cm, "_c", None)
    st = state(data.shape[1], cum is not None, len(counts), version)
    enc = cm.BlockEncoder(st, len(counts))
    if per_step:
        for t in range(len(counts)):
            enc.steps(data[t:t + 1], counts[t:t + 1], None if cum is None else cum[t:t + 1])
    else:
        enc.steps(data, counts, cum)
    monkeypatch.undo()
    return enc.finish(), st


def decode(payload, counts, cum, lanes, impl, monkeypatch, version=cm.VERSION):
    if impl == "python":
        monkeypatch.setattr(cm, "_c", None)
    st = state(lanes, cum is not None, len(counts), version)
    dec = cm.BlockDecoder(st, payload, len(counts))
    out = dec.steps(counts, cum)
    dec.finish()
    monkeypatch.undo()
    return out


INPUTS = {
    "text": TEXT[:900],
    # repeats within and across streams, and streams equal at the same offsets: the match model
    # finds pointers into streams not yet coded at this step (which it must not read)
    "repeats": TEXT[:150] * 2 + TEXT[:300] + TEXT[:300] + TEXT[100:400],
    # version 4's contexts: indented lines (one indent past its 255 cap), every byte class, words
    # and their predecessors
    "code": TEXT[1790:2300] + b"X = [1, 2, 3]  # {a: b}; c.d\n\tTab\r\n" * 4 + b" " * 300
    + b"deep()\n" + TEXT[1800:2000],
    # version 15's contexts: 4- and 8-byte records, every byte value; version 16's: 12-byte
    # records (its contexts read the streams' histories from their first byte)
    "records": np.arange(200, dtype="<u4").tobytes() + pseudo_random_bytes(300)
    + np.arange(0, 2 ** 40, 2 ** 33, dtype="<u8").tobytes()
    + b"".join(i.to_bytes(4, "little") + b"rec" + bytes([i % 7]) * 5 for i in range(60)),
}


# the versions as files have them: 1, 2 and 4 with and without a network (every profile wrote
# them), 6 with one (the network profiles'), 10, 15 and 16 without (the cm profile's, for text,
# binary data and records); the primed versions are in test_cm_primer.py, whose cm.learn runs
# each one without a primer too
WRITTEN = [(v, network) for v in (1, 2, 4) for network in (False, True)] + [
    (6, True), (10, False), (15, False), (16, False)]


def test_every_version_is_checked_as_files_have_it():
    assert sorted({v for v, _ in WRITTEN}) == [v for v in cm.VERSIONS if not cm.is_primed(v)]
    assert (cm.VERSION, True) in WRITTEN and (cm.VERSION_ALONE, False) in WRITTEN


@pytest.mark.parametrize(("kind", "version", "network"), [
    (kind, v, n) for v, n in WRITTEN for kind in INPUTS
    if kind != "records" or v in (cm.BINARY, cm.RECORD)])
def test_compiled_and_reference_are_identical_and_decode_each_other(kind, network, version,
                                                                   monkeypatch):
    if cm.backend() != "c":
        pytest.skip("the compiled mixing stage is not built here (no C compiler)")
    data, counts = streams_of(INPUTS[kind], 3)
    cum = network_cum(len(counts), 3) if network else None
    fast, st_c = encode(data, counts, cum, "c", monkeypatch, network, version)
    ref, st_p = encode(data, counts, cum, "python", monkeypatch, network, version)
    assert fast == ref
    for a, b in zip(st_c.arrays(), st_p.arrays(), strict=True):
        assert np.array_equal(a, b)
    for impl in ("c", "python"):
        assert np.array_equal(decode(fast, counts, cum, 3, impl, monkeypatch, version), data)


@pytest.mark.parametrize("impl", ["c", "python"])
@pytest.mark.parametrize(("version", "network"), [(1, True), (6, True)])
def test_a_step_coded_in_slices_of_streams_is_the_step_coded_whole(impl, version, network,
                                                                    monkeypatch):
    """What a split network hands over: each step's streams in slices (the coding process's
    first, while another computes the rest). Same bytes and learned tables as whole steps, and
    the decoder, in other slices, reads them back; a step's last slice ends it (the match
    model's clock), also where fewer streams than the block's lanes are left."""
    if impl == "c" and cm.backend() != "c":
        pytest.skip("the compiled mixing stage is not built here (no C compiler)")
    data, counts = streams_of(INPUTS["repeats"], 5)
    cum = network_cum(len(counts), 5)
    whole, st_w = encode(data, counts, cum, impl, monkeypatch, True, version)
    if impl == "python":
        monkeypatch.setattr(cm, "_c", None)
    cuts = {0: [(0, 2), (2, 5)], 1: [(0, 1), (1, 4), (4, 5)], 2: [(0, 5)]}

    def slices(t, shift=0):
        k = int(counts[t])                   # as the codec: lanes past k are not coded, and the
        out = [(lo, min(hi, k)) for lo, hi in cuts[(t + shift) % 3] if lo < k]  # one that
        return out[:-1] + [(out[-1][0], 5)]                                     # reaches k ends it
    st = cm.CMState(5, True, len(counts), version)
    enc = cm.BlockEncoder(st, len(counts))
    for t in range(len(counts)):
        for at in slices(t):
            enc.steps(data[t:t + 1], counts[t:t + 1], cum[t:t + 1], at)
    assert enc.finish() == whole
    for a, b in zip(st.arrays(), st_w.arrays(), strict=True):
        assert np.array_equal(a, b)
    dec = cm.BlockDecoder(cm.CMState(5, True, len(counts), version), whole, len(counts))
    got = np.zeros_like(data)
    for t in range(len(counts)):
        for lo, hi in slices(t, shift=1):
            got[t, lo:hi] = dec.steps(counts[t:t + 1], cum[t:t + 1], (lo, hi))[0, lo:hi]
    dec.finish()
    assert np.array_equal(got, data)


def test_a_slice_of_streams_out_of_range_is_refused():
    if cm.backend() != "c":
        pytest.skip("the compiled mixing stage is not built here (no C compiler)")
    data, counts = streams_of(TEXT[:300], 3)
    enc = cm.BlockEncoder(cm.CMState(3, False, len(counts), 4), len(counts))
    for at in [(2, 1), (0, 4), (-1, 2)]:
        with pytest.raises(ValueError, match="streams"):
            enc.steps(data[:1], counts[:1], None, at)
    with pytest.raises(ValueError, match="over 2 steps"):   # slices are one step's
        enc.steps(data[:2], counts[:2], None, (0, 2))


def test_the_match_model_finds_repeats_across_streams(monkeypatch):
    """Version 2's match model: a stream that repeats what another stream holds costs far less
    than under version 1, whose contexts reach back at most 6 bytes (random DNA: 2 bits a
    letter, every 6-letter context seen with every successor)."""
    dna = bytes(b"ACGT"[v & 3] for v in pseudo_random_bytes(12000))
    data, counts = streams_of(dna[:8000] + dna[8000:] + dna[:4000], 2)  # stream 1's second half
    # repeats what stream 0 coded 4,000 steps before
    sizes = {v: len(encode(data, counts, None, cm.backend(), monkeypatch, False, v)[0])
             for v in cm.VERSIONS}
    assert sizes[1] > 3800 and sizes[2] < 3000 * 1.1, sizes


def test_version_6_weighs_the_network_against_the_context_models(monkeypatch):
    """Version 6's final mixers: a network that predicts nothing (random frequencies) costs
    nothing against the stage alone, where version 4 (the network among the contexts' inputs)
    pays for it; a network that knows the text is still used (on 3,000 bytes of source text)."""
    from pathlib import Path
    text = (Path(__file__).parents[1] / "engine" / "golden" / "source.txt").read_bytes()
    data, counts = streams_of(text, 3)
    noise = network_cum(len(counts), 3)
    f = np.ones((len(counts), 3, 256), dtype=np.int64)
    np.put_along_axis(f, data[:, :, None].astype(np.int64), 60, axis=2)   # the true byte 60x
    knows = np.zeros_like(noise)
    knows[:, :, 1:] = np.cumsum(f, axis=-1)

    def size(cum, version):
        return len(encode(data, counts, cum, cm.backend(), monkeypatch, False, version)[0])
    alone = size(None, 4)           # the stage alone, with the context models version 6 mixes
    assert size(noise, 6) <= alone < size(noise, 4), (alone, size(noise, 6), size(noise, 4))
    assert size(knows, 6) < alone / 4
    assert size(None, cm.VERSION_ALONE) < alone     # version 10: learned final mixers, alone


def test_it_compresses_text_and_learns_across_streams(monkeypatch):
    data, counts = streams_of(TEXT * 3, 4)
    payload, _ = encode(data, counts, None, "c" if cm.backend() == "c" else "python",
                        monkeypatch, per_step=False)
    assert 8 * len(payload) / int(counts.sum()) < 1.0      # TEXT repeats: nearly free
    noise, ncounts = streams_of(pseudo_random_bytes(3000), 2)
    payload, _ = encode(noise, ncounts, None, cm.backend(), monkeypatch, per_step=False)
    assert len(payload) < 1.01 * int(ncounts.sum()) + 16  # incompressible: ~8 bits per byte


def test_damage_is_found(monkeypatch):
    data, counts = streams_of(TEXT[:2000], 2)
    payload, _ = encode(data, counts, None, cm.backend(), monkeypatch, per_step=False)
    with pytest.raises(FormatError, match="decoder read"):
        decode(payload + b"\x00\x01", counts, None, 2, cm.backend(), monkeypatch)
    with pytest.raises(FormatError, match="empty"):
        cm.BlockDecoder(cm.CMState(2, False, len(counts)), b"", len(counts))
    flipped = bytearray(payload)
    flipped[len(flipped) // 2] ^= 0x10
    try:
        out = decode(bytes(flipped), counts, None, 2, cm.backend(), monkeypatch)
    except FormatError:
        return
    assert not np.array_equal(out, data)


def test_the_cm_profile_needs_no_model(tmp_path, monkeypatch):
    from umoec.compress.api import compress_bytes, compress_path, decompress_bytes, decompress_path
    monkeypatch.setenv("UMOEC_MODEL_PATH", str(tmp_path / "nowhere"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    blob = compress_bytes(TEXT, None, profile="cm", input_name="t.txt")
    h = read_header(blob)
    assert (h.coder, h.profile, h.streams, h.model_hash) == ("cm", "cm", 1, bytes(32))
    assert decompress_bytes(blob) == TEXT
    assert len(blob) < len(TEXT) / 4
    (tmp_path / "in.txt").write_bytes(TEXT)
    res = compress_path(tmp_path / "in.txt", tmp_path / "in.umc", profile="cm")
    assert res.model.startswith("none") and res.profile == "cm"
    back = decompress_path(tmp_path / "in.umc", tmp_path / "out.txt")
    assert (tmp_path / "out.txt").read_bytes() == TEXT and back.model.startswith("none")


def test_a_payload_edited_behind_its_crc_is_not_called_damage():
    """The block CRC passes, so the bytes are as written: a mismatch is reported as a decoding
    bug (DecodeMismatch), never as a corrupted file."""
    import struct
    import zlib

    from umoec.codec.container import RECORD_SIZE, parse_header
    from umoec.compress.api import compress_bytes, decompress_bytes
    blob = bytearray(compress_bytes(TEXT, None, profile="cm"))
    _, offset = parse_header(bytes(blob))
    plen = struct.unpack_from("<I", blob, offset)[0]
    start = offset + RECORD_SIZE
    blob[start + plen // 2] ^= 0x04
    crc = zlib.crc32(bytes(blob[start:start + plen]), zlib.crc32(bytes(blob[offset:offset + 5])))
    struct.pack_into("<I", blob, offset + 5, crc)
    with pytest.raises(DecodeMismatch, match="not damaged"):
        decompress_bytes(bytes(blob))
    assert hashlib.sha256(TEXT).digest() == read_header(bytes(blob)).sha256


@pytest.mark.parametrize("network", [True, False])
def test_a_block_that_begins_after_some_streams_ended(network, monkeypatch):
    """258 bytes in 4 streams, blocks of 64 steps: the second block's one step codes only
    streams 0 and 1 (the others ended). The compiled stage refused it (its arrays are the
    streams', it was handed the block's two lanes): such a file could not be written. Now the
    stage gets every stream's lane; compiled and reference write the same file, both decode it."""
    from umoec.codec import CodecSettings, compress, decompress
    from umoec.predict.match import MatchMixer, MatchSettings
    from umoec.predict.order2 import Order2Predictor

    def predictor():
        return MatchMixer(Order2Predictor(), MatchSettings.standard(5)) if network else cm.NoNetwork()
    data = TEXT[:4 * 64 + 2]
    settings = CodecSettings(streams=4, coder="cm", block_size=256)
    assert read_header(compress(data, predictor(), settings)).layout.counts(64, 65)[0] == 2
    files = {}
    for impl in ("c", "python"):
        if impl == "c" and cm.backend() != "c":
            continue
        if impl == "python":
            monkeypatch.setattr(cm, "_c", None)
        files[impl] = compress(data, predictor(), settings)
        monkeypatch.undo()
    assert len(set(files.values())) == 1
    blob = next(iter(files.values()))
    assert decompress(blob, predictor()) == data
    monkeypatch.setattr(cm, "_c", None)
    assert decompress(blob, predictor()) == data


@pytest.mark.parametrize("network", [True, False])
@pytest.mark.parametrize("streams", [1, 3, 5, 8])
def test_every_size_around_stream_and_block_edges_round_trips(streams, network):
    """Sizes where streams end a step apart and blocks begin at, before or after that step
    (the edges where a block's lanes differ from the file's streams), with the smallest blocks:
    each one codes and decodes back."""
    from umoec.codec import CodecSettings, compress, decompress
    from umoec.codec.container import MIN_BLOCK_SIZE
    from umoec.predict.match import MatchMixer, MatchSettings
    from umoec.predict.order2 import Order2Predictor

    def predictor():
        return MatchMixer(Order2Predictor(), MatchSettings.standard(5)) if network else cm.NoNetwork()
    settings = CodecSettings(streams=streams, coder="cm", block_size=MIN_BLOCK_SIZE)
    q = -(-MIN_BLOCK_SIZE // streams) * streams         # a block's bytes
    data = TEXT * (3 * q // len(TEXT) + 2)
    for size in sorted({0, 1, streams - 1, streams + 1, q - 1, q, q + 1, 2 * q + streams - 1,
                        3 * q - 2}):
        blob = compress(data[:size], predictor(), settings)
        assert decompress(blob, predictor()) == data[:size], size


def test_version_16_takes_a_record_length_and_no_other_version_does():
    for version, record in ((cm.RECORD, 0), (cm.RECORD, 1), (cm.RECORD, cm.MAX_RECORD + 1),
                            (cm.BINARY, 8)):
        with pytest.raises(ValueError, match="records of"):
            cm.CMState(1, False, 10, version, record=record)
    with pytest.raises(ValueError, match="records of 1 bytes"):
        cm.NoNetwork(record=1)
    assert cm.NoNetwork(record=40).fingerprint() != cm.NoNetwork(record=8).fingerprint()
    assert cm.NoNetwork(b"primer", "ab" * 32, record=40).record == 0
