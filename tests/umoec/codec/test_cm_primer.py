"""The mixing stage primed with a model's primer (versions 3, 5, 7, 8, 9, 11-14): the compiled
loop equals the reference with the primer's region in the match model (pointers into it, and one
that runs off its end), either decodes what the other wrote, priming makes text of the primer's
kind smaller, and a state made for another primer is refused."""
import numpy as np
import pytest

from tests.umoec.codec.helpers import TEXT
from tests.umoec.codec.test_cm import network_cum, streams_of
from umoec.codec import cm

PRIMER = TEXT[:600]
# the primer's second half then what follows it in TEXT: a match runs to the primer's end and
# must stop there; then text the primer never saw, then the primer's start again
DATA = TEXT[300:900] + TEXT[:300]


def primed(lanes: int, network: bool, steps: int, text: bytes = PRIMER,
           version: int = cm.PRIMED) -> cm.CMState:
    st = cm.CMState(lanes, network, steps, version, len(text))
    cm.prime(st, cm.learn(text, version), text)
    return st


def code(impl, monkeypatch, network, lanes=2, text=PRIMER, data=DATA, version=cm.PRIMED):
    if impl == "python":
        monkeypatch.setattr(cm, "_c", None)
    m, counts = streams_of(data, lanes)
    cum = network_cum(len(counts), lanes, seed=3) if network else None
    st = primed(lanes, network, len(counts), text, version)
    enc = cm.BlockEncoder(st, len(counts))
    enc.steps(m, counts, cum)
    payload = enc.finish()
    monkeypatch.undo()
    return payload, st, (m, counts, cum)


# the primed versions as files have them: the network profiles' (3, 5, 7, 8, 14) with the network's
# input, the cm profile's (9, 11-13) without; cm.learn runs each one without a network too
NETWORK_PRIMED, ALONE_PRIMED = (3, 5, 7, 8, 14), (9, 11, 12, 13)


def test_every_primed_version_is_checked_as_files_have_it():
    assert sorted(NETWORK_PRIMED + ALONE_PRIMED) == [v for v in cm.VERSIONS if cm.is_primed(v)]
    assert cm.PRIMED in NETWORK_PRIMED and cm.PRIMED_ALONE in ALONE_PRIMED


@pytest.mark.skipif(cm.backend() != "c", reason="the compiled loop was not built")
@pytest.mark.parametrize(("network", "version"), [(True, v) for v in NETWORK_PRIMED]
                         + [(False, v) for v in ALONE_PRIMED])
def test_compiled_and_reference_are_identical_and_decode_each_other(network, version, monkeypatch):
    got = {impl: code(impl, monkeypatch, network, version=version) for impl in ("c", "python")}
    (pc, sc, (m, counts, cum)), (pp, sp, _) = got["c"], got["python"]
    assert pc == pp
    for a, b in zip(sc.arrays(), sp.arrays(), strict=True):
        assert np.array_equal(a, b)
    # the match model followed pointers into the primer (its region holds the primer)
    hb = sc.match[0]
    assert hb[-len(PRIMER):].tobytes() == PRIMER
    for impl in ("c", "python"):
        if impl == "python":
            monkeypatch.setattr(cm, "_c", None)
        st = primed(2, network, len(counts), version=version)
        dec = cm.BlockDecoder(st, pc, len(counts))
        out = dec.steps(counts, cum)
        dec.finish()
        monkeypatch.undo()
        assert np.array_equal(out, m)


def test_priming_makes_text_of_its_kind_smaller(monkeypatch):
    impl = cm.backend()
    m, counts = streams_of(DATA, 2)
    plain = cm.CMState(2, False, len(counts))
    enc = cm.BlockEncoder(plain, len(counts))
    enc.steps(m, counts)
    unprimed = len(enc.finish())
    primed_size = len(code(impl, monkeypatch, False)[0])
    # 900 bytes, 600 of them in the primer: the match model and counters already know them
    assert primed_size < unprimed * 0.6, (primed_size, unprimed)


def test_a_state_made_for_another_primer_is_refused():
    taught = cm.learn(PRIMER)
    with pytest.raises(ValueError):
        cm.prime(cm.CMState(1, False, 10, cm.PRIMED, len(PRIMER) - 1), taught, PRIMER[:-1])
    with pytest.raises(ValueError):
        cm.prime(cm.CMState(1, False, 10, cm.VERSION), taught, PRIMER)
    with pytest.raises(ValueError):
        cm.CMState(1, False, 10, cm.VERSION, primer=5)     # only primed versions have a primer
    with pytest.raises(ValueError):                         # taught by another version's stage
        cm.prime(cm.CMState(1, False, 10, 3, len(PRIMER)), taught, PRIMER)


def test_the_taught_state_is_kept_per_text():
    cm.forget()
    a = cm.taught(PRIMER)
    assert cm.taught(PRIMER) is a                 # the second file of a process reuses it
    assert cm.taught(PRIMER[:300]) is not a
    cm.forget()


@pytest.mark.skipif(cm.backend() != "c", reason="the compiled loop was not built")
def test_version_12s_word_contexts_pay_when_primed(monkeypatch):
    """The cm profile's primed stage (version 12: version 11 with the previous words and order 5
    as contexts) codes the text that follows its primer smaller than version 11."""
    from tests.conftest import ROOT
    text = b"".join(p.read_bytes() for p in sorted((ROOT / "docs").glob("*.md")))
    primer, data = text[:-20_000], text[-20_000:]
    sizes = {v: len(code("c", monkeypatch, False, text=primer, data=data, version=v)[0])
             for v in (11, 12)}
    assert 12 in cm.WORDS4 and cm.PRIMED_ALONE == 13   # 13: these contexts, 2^25 slots
    assert sizes[12] < sizes[11] * 0.998, sizes      # 290 kB primer: -0.33%; 2 MB: -0.5-0.8%


@pytest.mark.skipif(cm.backend() != "c", reason="the compiled loop was not built")
def test_version_14_codes_primed_text_smaller_than_version_8_with_a_network(monkeypatch):
    """The network profiles' primed stage (version 14: version 8 with version 12's contexts and
    2^25 slots) codes the text that follows its primer smaller than version 8, with the
    network's input beside the contexts."""
    from tests.conftest import ROOT
    text = b"".join(p.read_bytes() for p in sorted((ROOT / "docs").glob("*.md")))
    primer, data = text[:-20_000], text[-20_000:]
    sizes = {v: len(code("c", monkeypatch, True, lanes=4, text=primer, data=data, version=v)[0])
             for v in (8, 14)}
    assert cm.PRIMED == 14 and cm.nctx(14) == cm.NCTX12 + len(cm.LOCAL)
    assert sizes[14] < sizes[8] * 0.997, sizes       # 290 kB primer: 4,581 -> 4,558 B (-0.5%)


def test_a_new_text_is_learned_after_the_previous_state_is_dropped(monkeypatch):
    """Two learned states of 2^25 slots at once would cost ~290 MB at the peak."""
    cm.forget()
    cm.taught(PRIMER)
    seen, real = [], cm.learn

    def spy(text, version=cm.PRIMED):
        seen.append(len(cm._taught))
        return real(text, version)
    monkeypatch.setattr(cm, "learn", spy)
    cm.taught(PRIMER[:300])
    assert seen == [0]                           # nothing else held while it learns
    cm.forget()


def test_auto_with_a_primed_model_peaks_no_higher_than_one_primed_profile():
    """auto codes the input with the cm profile (version 13) and fast (version 14), each primed:
    one learned state and one stage of 2^25 slots at a time, as fast alone holds (two learned
    states at once were ~290 MB more)."""
    import subprocess
    import sys

    from tests.conftest import ROOT
    golden = ROOT / "tests" / "umoec" / "engine" / "golden"
    peaks = {}
    for profile in ("fast", "auto"):
        code = ("import resource; from pathlib import Path; from umoec.compress.api import "
                "compress_frame; from umoec.engine import modelfile as mf; "
                f"m = mf.read(Path({str(golden / 'tiny-primed.umm')!r})); "
                f"compress_frame(Path({str(golden / 'source.txt')!r}).read_bytes(), m, "
                f"profile={profile!r}); print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)")
        res = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                             text=True, timeout=300)
        assert res.returncode == 0, res.stderr
        peaks[profile] = int(res.stdout.split()[-1]) >> 10          # MB
    assert peaks["fast"] > 500, peaks                # the primed stage's tables are there
    assert peaks["auto"] < peaks["fast"] + 100, peaks
