"""`umc -l` (the header only) and `umc -t` (decode and verify, write nothing)."""
import hashlib

from tests.umoec.engine.test_golden import GOLDEN
from tests.umoec.umc.conftest import TEXT
from umoec.compress.profiles import PROFILES


def _damaged(blob: bytes, at: int) -> bytes:
    b = bytearray(blob)
    b[at] ^= 0x40
    return bytes(b)


def test_t_passes_a_good_file_and_fails_a_damaged_one_writing_nothing(umc, packed):
    blob = packed.read_bytes()
    umc.write("good.umc", blob)
    umc.write("bad.umc", _damaged(blob, len(blob) - 3))      # a payload byte of the last block
    r = umc("-t", "good.umc", "bad.umc")
    assert r.rc == 1
    assert any(ln.startswith("good.umc: OK") for ln in r.lines), r.err
    bad = [ln for ln in r.lines if ln.startswith("umc: bad.umc: ")]
    assert len(bad) == 1 and "corrupted" in bad[0], r.err
    assert sorted(p.name for p in umc.cwd.iterdir()) == ["bad.umc", "good.umc"]
    assert umc("-t", "-q", "good.umc").rc == 0


def test_d_refuses_a_damaged_file_and_writes_no_output(umc, packed):
    blob = packed.read_bytes()
    umc.write("x.umc", _damaged(blob, len(blob) - 3))
    r = umc("-d", "x.umc")
    assert r.rc == 1 and "corrupted" in r.err
    assert not (umc.cwd / "x").exists()


def test_l_shows_model_profile_sizes_ratio_bpb_and_sha256(umc, packed, default_model):
    blob = packed.read_bytes()
    umc.write("a.umc", blob)
    umc.write("cut.umc", blob[:len(blob) // 2])    # the header is intact: -l still reads it
    umc.write("plain.txt", b"not compressed at all")
    r = umc("-l", "a.umc", "cut.umc", "plain.txt")
    assert r.rc == 1
    assert r.lines == ["umc: plain.txt: not a .umc file: wrong magic b'not comp' "
                       "(expected b'\\x89UMC\\r\\n\\x1a\\n')"]
    title, row, cut = r.out.decode().splitlines()
    assert title.split() == ["compressed", "original", "ratio", "bpb", "profile", "model",
                             "sha256", "file"]
    bpb, ratio = 8 * len(blob) / len(TEXT), len(TEXT) / len(blob)
    assert row.split() == [f"{len(blob):,}", f"{len(TEXT):,}", f"{ratio:.2f}", f"{bpb:.3f}",
                           "fast", default_model.name, f"({default_model.short})",
                           hashlib.sha256(TEXT).hexdigest(), "a.umc"]
    assert cut.split()[0] == f"{len(blob) // 2:,}" and cut.endswith("cut.umc")
    # -t reads everything: the cut file fails
    r = umc("-t", "cut.umc")
    assert r.rc == 1 and "truncated" in r.err


def test_l_v_prints_every_header_field(umc, packed, default_model):
    umc.write("a.umc", packed.read_bytes())
    r = umc("-l", "-v", "a.umc")
    assert r.rc == 0
    name, *rest = r.out.decode().splitlines()
    fields = {ln[2:15].strip(): ln[16:] for ln in rest}     # "  key<13> value"
    assert name == "a.umc"
    assert fields["model"] == default_model.name and fields["model hash"] == default_model.hash
    assert fields["profile"] == "fast" and fields["sha256"] == hashlib.sha256(TEXT).hexdigest()
    assert fields["original"] == f"{len(TEXT):,} bytes"
    assert fields["compressed"] == f"{packed.stat().st_size:,} bytes"
    assert fields["input name"] == "text.txt" and \
        fields["streams"] == str(PROFILES["fast"].streams_for(len(TEXT)))
    assert fields["container"] == "format 3"
    umc.write("old.umc", (GOLDEN / "source.txt.fast-mix6.umc").read_bytes())   # an older build's
    old = umc("-l", "-v", "old.umc").out.decode().splitlines()
    assert "  container     format 2" in old


def test_a_cm_profile_file_lists_no_model_and_decodes_without_one(umc):
    umc.write("t.txt", TEXT)
    assert umc("-q", "--profile", "cm", "t.txt").rc == 0
    r = umc("-l", "t.txt.umc")
    assert r.rc == 0 and r.out.decode().splitlines()[1].split()[4:6] == ["cm", "none"]
    r = umc("-l", "-v", "t.txt.umc")
    assert "none (the cm profile)" in r.out.decode()
    (umc.cwd / "t.txt").unlink()
    assert umc("-q", "-d", "t.txt.umc").rc == 0 and (umc.cwd / "t.txt").read_bytes() == TEXT


def test_an_executable_is_filtered_and_l_v_says_so(umc):
    from tests.umoec.codec.helpers import x86_like
    code = x86_like(30_000)
    umc.write("prog", code)
    umc.write("t.txt", TEXT)
    r = umc("--profile", "cm", "prog", "t.txt")
    assert r.rc == 0
    said = {ln.split(" ->")[0]: ln for ln in r.lines if " -> " in ln}
    assert said["prog"].endswith(", x86 filter") and "x86" not in said["t.txt"]
    shown = {name: umc("-l", "-v", name).out.decode() for name in ("prog.umc", "t.txt.umc")}
    assert "  filter        x86 (call and jump targets made absolute)" in shown["prog.umc"]
    assert "  filter        none" in shown["t.txt.umc"]
    (umc.cwd / "prog").unlink()
    assert umc("-q", "-d", "prog.umc").rc == 0 and (umc.cwd / "prog").read_bytes() == code


def test_l_v_names_the_record_length_of_a_file_coded_with_contexts_for_records(umc):
    umc.write("records.umc", (GOLDEN / "format3" / "records.bin.cm-mix16.umc").read_bytes())
    umc.write("t.umc", (GOLDEN / "format3" / "binary.bin.cm-mix15.umc").read_bytes())
    shown = umc("-l", "-v", "records.umc").out.decode()
    assert "  records       48 bytes (the mixing stage's contexts for them)" in shown
    assert "records" not in umc("-l", "-v", "t.umc").out.decode()
    assert umc("-t", "-q", "records.umc").rc == 0
