"""The streams split over processes (umoec/engine/split.py): the very logits and files of one
process, children that end with the coding, and a failing child reported as what it is."""
import os
import time

import numpy as np
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

from umoec.compress.api import compress_bytes, decompress_bytes
from umoec.engine import kernels, split
from umoec.engine.predictor import ExactPredictor

TEXT = (b"def step(self, byte, state):\n    return self.model(byte), state  # exact\n" * 40)

pytestmark = pytest.mark.skipif(not split.can_fork(), reason="no fork on this OS")


@pytest.fixture
def threads(monkeypatch):
    """Coding as with `-T n`, and no minimum of streams per process (small test inputs)."""
    def use(n: int):
        monkeypatch.setenv("UMOEC_ENGINE_THREADS", str(n))
        monkeypatch.setenv("UMOEC_SPLIT_MIN_ROWS", "1")
    return use


def _columns(B: int):
    T = len(TEXT) // B
    x = np.frombuffer(TEXT[:B * T], np.uint8).reshape(B, T).astype(np.int64)
    return [np.zeros(B, np.int64)] + [x[:, t] for t in range(T - 1)]


def test_bounds_cover_the_streams_with_the_coding_process_s_share():
    assert split.bounds(256, 2) == [(0, 128), (128, 256)]
    assert split.bounds(8, 3) == [(0, 3), (3, 6), (6, 8)]
    assert split.bounds(1, 1) == [(0, 1)]
    assert split.bounds(64, 2, 0.6) == [(0, 24), (24, 64)]   # 0.6 of a child's share
    assert split.bounds(64, 3, 0.5) == [(0, 13), (13, 39), (39, 64)]
    assert split.bounds(2, 2, 0.1) == [(0, 1), (1, 2)]       # one stream each at least
    assert split.bounds(3, 3, 9.0) == [(0, 1), (1, 2), (2, 3)]


def test_a_decoder_s_slices_put_each_child_s_two_groups_around_its_own():
    assert split.interleaved(64, 2) == [(0, 16, 1), (16, 48, 0), (48, 64, 1)]
    assert split.interleaved(64, 2, 0.4) == [(0, 23, 1), (23, 18 + 23, 0), (41, 64, 1)]
    assert split.interleaved(8, 3, 0.5) == [(0, 2, 1), (2, 4, 2), (4, 6, 0), (6, 7, 1),
                                            (7, 8, 2)]
    assert split.interleaved(3, 3) == [(0, 1, 1), (1, 2, 2), (2, 3, 0)]   # one group of one


def test_the_coding_process_takes_fewer_streams_unless_told(monkeypatch, tiny_model):
    """LEAD, LEAD_ADAPTING (the coding process also runs the adaptation) for encoders and
    decoders alike, each overridden by its own setting; a bad setting keeps the default."""
    for name, foreseen in (("UMOEC_SPLIT_LEAD", False), ("UMOEC_SPLIT_LEAD_FORESEEN", True)):
        monkeypatch.delenv(name, raising=False)
        assert split._lead(foreseen) == split.LEAD < 1
        assert split._lead(foreseen, adapting=True) == split.LEAD_ADAPTING < split.LEAD
        for bad in ("x", "0", "-1", "nan", "100"):
            monkeypatch.setenv(name, bad)
            assert split._lead(foreseen) == split.LEAD
            assert split._lead(foreseen, adapting=True) == split.LEAD_ADAPTING
        monkeypatch.setenv(name, "0.7")
        assert split._lead(foreseen) == split._lead(foreseen, adapting=True) == 0.7
        assert split._lead(not foreseen) == split.LEAD
        monkeypatch.delenv(name)
    monkeypatch.setenv("UMOEC_SPLIT_LEAD", "1")
    p = ExactPredictor(tiny_model, None, adapt_rate=32)
    shared = split.Split(p.engine, p.g, 64, 2)
    try:
        assert shared.slices == [(0, 16, 1), (16, 48, 0), (48, 64, 1)]
    finally:
        shared.close()


def test_an_encoder_s_split_differs_from_a_decoder_s(tiny_model, threads, monkeypatch):
    """The encoder foresees its steps, so its children compute while it codes: its slice comes
    first, each child's after; the decoder's children hold two groups around its slice (both
    LEAD_ADAPTING: fast adapts). The file is the same."""
    monkeypatch.delenv("UMOEC_SPLIT_LEAD", raising=False)
    monkeypatch.delenv("UMOEC_SPLIT_LEAD_FORESEEN", raising=False)
    made, real = [], split.Split.__init__

    def spy(self, *args, **kwargs):
        real(self, *args, **kwargs)
        made.append(self.slices)
    monkeypatch.setattr(split.Split, "__init__", spy)
    data = TEXT * 3 + bytes(range(256)) * 4           # fast: 10 streams
    threads(1)
    one = compress_bytes(data, tiny_model, profile="fast")
    threads(2)
    blob = compress_bytes(data, tiny_model, profile="fast")
    assert blob == one and decompress_bytes(blob, tiny_model) == data
    (enc, dec), B = made, made[0][-1][1]
    assert enc == [(lo, hi, c) for c, (lo, hi) in enumerate(split.bounds(B, 2, split.LEAD_ADAPTING))]
    assert dec == split.interleaved(B, 2, split.LEAD_ADAPTING)


def _expected_log(slices) -> list:
    out = ["meanwhile"]
    for lo, hi, owner in slices:
        out += ["result", (lo, hi)] if owner else [(lo, hi)]
    return out


@pytest.mark.parametrize("foreseen", [False, True])
def test_step_parts_hand_over_each_slice_as_it_comes(tiny_model, monkeypatch, foreseen):
    """The coder gets the slices in stream order, this process's own without awaiting any
    child after it, `meanwhile` once before them, and together they are the logits of one
    process (with the adaptation, which learns from all rows): an encoder's split with its own
    slice first, a decoder's with the children's groups around it."""
    p = ExactPredictor(tiny_model, None, adapt_rate=32)
    B = 7
    whole = p.engine.init_state(B, p.g)
    shared = split.Split(p.engine, p.g, B, 3, foreseen)
    assert [s[2] for s in shared.slices] == ([0, 1, 2] if foreseen else [1, 2, 0, 1, 2])
    log, got = [], []
    result = split._Child.result
    monkeypatch.setattr(split._Child, "result", lambda c: log.append("result") or result(c))
    try:
        for byte in _columns(B)[:12]:
            expected, whole = p.engine.step(byte, whole)
            log.clear()
            got.clear()
            shared.step_parts(byte, lambda lo, hi, x: log.append((lo, hi)) or got.append(x),
                              lambda: log.append("meanwhile"))
            assert log == _expected_log(shared.slices)
            assert np.array_equal(np.concatenate(got), expected)
    finally:
        shared.close()


@pytest.mark.parametrize(("parts", "adapt_rate"), [(2, 0), (2, 32), (3, 32)])
def test_a_decoder_s_child_gets_a_group_s_bytes_as_soon_as_they_are_coded(tiny_model, parts,
                                                                          adapt_rate):
    """Where emit returns the bytes a child's group coded (a decoder's coder does), the child
    gets them at once and computes that group's next step while the step goes on; the next
    step finds them told, and every step's logits are still those of one process."""
    p = ExactPredictor(tiny_model, None, adapt_rate=adapt_rate)
    B = 9
    whole = p.engine.init_state(B, p.g)
    shared = split.Split(p.engine, p.g, B, parts)
    cols = _columns(B)[:14]
    told = []
    try:
        for t, byte in enumerate(cols):
            expected, whole = p.engine.step(byte, whole)
            nxt = cols[t + 1] if t + 1 < len(cols) else np.zeros(B, np.int64)
            got = []

            def emit(lo, hi, logits, nxt=nxt, got=got):
                got.append(logits)
                told.append(sum(c.sent for c in shared.children))
                return nxt[lo:hi]                 # the bytes "decoded" at this step
            before = sum(c.sent for c in shared.children)
            shared.step_parts(byte, emit)
            assert np.array_equal(np.concatenate(got), expected)
            groups = len(shared.slices) - 1
            # the first step's bytes went at its start; each group's next ones right after
            # its slice was emitted, none at a later step's start
            assert sum(c.sent for c in shared.children) == before + groups * (2 if t == 0 else 1)
        assert told[1] > told[0]                  # a child's group told before the step ended
    finally:
        shared.close()


@pytest.mark.parametrize("adapt_rate", [0, 32])
def test_foreseen_steps_are_computed_ahead_and_give_the_logits_of_one_process(tiny_model,
                                                                              adapt_rate):
    """The encoder tells the split the next step's bytes (foresee): the children get them with
    this step's and compute that step while this process codes, and every step's logits are
    still those of one process (with the adaptation too, which lives here)."""
    p = ExactPredictor(tiny_model, None, adapt_rate=adapt_rate)
    B = 7
    whole = p.engine.init_state(B, p.g)
    shared = split.Split(p.engine, p.g, B, 3, foreseen=True)
    cols = _columns(B)[:12]
    try:
        for t, byte in enumerate(cols):
            expected, whole = p.engine.step(byte, whole)
            if t + 1 < len(cols):
                shared.foresee(cols[t + 1])
            assert np.array_equal(shared.step(byte), expected)
            if t + 1 < len(cols):   # the next step said "go" for, and computed unasked
                assert all(c.sent == c.taken + 1 for c in shared.children)
                deadline = time.monotonic() + 30
                while any(c.io.counters[split._DONE_AT] < c.sent for c in shared.children):
                    assert time.monotonic() < deadline, "a child did not compute ahead"
                    time.sleep(0.001)
    finally:
        shared.close()


@pytest.mark.parametrize("foreseen", [False, True])
def test_a_step_unlike_the_bytes_a_child_was_given_is_refused(tiny_model, foreseen):
    """An encoder's foreseen bytes, or those a decoder's coder handed back, that the next step
    then contradicts: a bug, refused, never coded with the wrong state."""
    p = ExactPredictor(tiny_model, None)
    shared = split.Split(p.engine, p.g, 4, 2, foreseen)
    cols = _columns(4)
    wrong = (cols[1] + 1) % 256
    try:
        if foreseen:
            shared.foresee(wrong)
            shared.step(cols[0])
        else:
            shared.step_parts(cols[0], lambda lo, hi, logits: wrong[lo:hi])
        with pytest.raises(split.EngineError, match="differ from those a child was given"):
            shared.step(cols[1])
    finally:
        shared.close()


def _blas_threads() -> int:
    return max(i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas")


def test_a_split_runs_one_blas_thread_in_each_process(tiny_model, tmp_path, monkeypatch):
    """With OPENBLAS_NUM_THREADS=2 each process's BLAS pool spun beside the other process: fast
    ran 5x slower. The split runs one BLAS thread in each process and gives the user's count
    back when it ends."""
    if not any(i["user_api"] == "blas" for i in threadpool_info()):
        pytest.skip("no BLAS library found in this process")
    real = split._one_blas_thread

    def recorded():                           # in each process: what its BLAS runs after
        out = real()
        (tmp_path / str(os.getpid())).write_text(str(_blas_threads()))
        return out

    monkeypatch.setattr(split, "_one_blas_thread", recorded)
    with threadpool_limits(2, user_api="blas"):   # as OPENBLAS_NUM_THREADS=2 does
        if _blas_threads() != 2:
            pytest.skip("this BLAS runs one thread at most here")
        p = ExactPredictor(tiny_model, None)
        shared = split.Split(p.engine, p.g, 4, 2)
        try:
            shared.step(np.zeros(4, np.int64))    # the child is at work
            assert _blas_threads() == 1
            assert (tmp_path / str(shared.children[0].proc.pid)).read_text() == "1"
        finally:
            shared.close()
        assert _blas_threads() == 2


def test_parts_follow_threads_and_streams(monkeypatch):
    monkeypatch.delenv("UMOEC_SPLIT_MIN_ROWS", raising=False)
    assert split.parts_for(256, 2) == 2
    assert split.parts_for(256, 4) == 4
    assert split.parts_for(256, 1) == 1
    assert split.parts_for(48, 2) == 2
    assert split.parts_for(12, 2) == 2               # fast on a 12 KiB input
    assert split.parts_for(11, 2) == 1               # 5 streams a process would not pay
    assert split.parts_for(12, 4) == 2
    monkeypatch.setenv("UMOEC_SPLIT_MIN_ROWS", "1")
    assert split.parts_for(3, 4) == 3
    monkeypatch.setenv("UMOEC_SPLIT_MIN_ROWS", "many")
    assert split.parts_for(256, 2) == 2              # a bad setting keeps the default
    assert split.parts_for(11, 2) == 1


@pytest.mark.parametrize(("parts", "adapt_rate"), [(2, 0), (3, 0), (2, 32), (3, 1000)])
def test_split_logits_equal_one_process(tiny_model, parts, adapt_rate):
    p = ExactPredictor(tiny_model, np.linspace(-1, 1, 8).astype(np.float32),
                       adapt_rate=adapt_rate)
    B = 7
    whole = p.engine.init_state(B, p.g)
    shared = split.Split(p.engine, p.g, B, parts)
    try:
        assert len(shared.children) == parts - 1
        for byte in _columns(B):
            expected, whole = p.engine.step(byte, whole)
            assert np.array_equal(shared.step(byte), expected)
    finally:
        shared.close()
    assert all(not c.proc.is_alive() for c in shared.children)


@pytest.mark.parametrize("early", [False, True])
@pytest.mark.parametrize("spin", [0.0, 0.0005])
def test_a_side_asleep_on_its_pipe_gets_its_hand_off(tiny_model, monkeypatch, spin, early):
    """With no spin (every wait sleeps on the pipe) or a short one and this process pausing
    longer between steps (the child's spin runs out, it raises its flag and sleeps), every
    step still arrives (an alarm fails the test if a sleeper were never woken) with the
    logits of one process; also when a decoder's coder hands each group's bytes on mid-step."""
    import signal
    import time

    def hung(*_):
        raise TimeoutError("a side slept through its hand-off")
    monkeypatch.setattr(split, "SPIN_S", spin)
    p = ExactPredictor(tiny_model, None)
    B = 4
    whole = p.engine.init_state(B, p.g)
    old = signal.signal(signal.SIGALRM, hung)
    signal.alarm(60)
    shared = split.Split(p.engine, p.g, B, 2)
    cols = _columns(B)[:41]
    try:
        for t, byte in enumerate(cols[:40]):
            if spin and t % 4 == 0:
                time.sleep(0.002)
            expected, whole = p.engine.step(byte, whole)
            got = []

            def emit(lo, hi, logits, nxt=cols[t + 1], got=got):
                got.append(logits)
                if spin and lo == 0:
                    time.sleep(0.001)             # the child, idle, goes to sleep meanwhile
                return nxt[lo:hi] if early else None
            shared.step_parts(byte, emit)
            assert np.array_equal(np.concatenate(got), expected)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
        shared.close()


@pytest.mark.parametrize("profile", ["turbo", "fast", "balanced"])
def test_files_are_identical_and_decode_across_process_counts(tiny_model, threads, profile):
    data = TEXT * 3 + bytes(range(256)) * 4          # fast: 10 streams, balanced: 2
    threads(1)
    one = compress_bytes(data, tiny_model, profile=profile)
    threads(3)
    before = split.started()
    three = compress_bytes(data, tiny_model, profile=profile)
    assert split.started() > before                  # it did run in several processes
    assert three == one
    assert decompress_bytes(one, tiny_model) == data
    threads(1)
    assert decompress_bytes(three, tiny_model) == data


def test_a_killed_child_is_reported_not_blamed_on_the_file(tiny_model, threads):
    threads(2)
    p = ExactPredictor(tiny_model, None)
    state = p.init_state(4)
    byte = np.zeros(4, np.int64)
    p.step(byte, state)
    child = state.children[0].proc
    child.kill()
    child.join(5)
    with pytest.raises(split.EngineError, match=r"exit code -9.*not damage"):
        p.step(byte, state)
    state.close()


def test_children_end_when_the_state_is_dropped(tiny_model, threads):
    threads(2)
    p = ExactPredictor(tiny_model, None)
    state = p.init_state(4)
    procs = [c.proc for c in state.children]
    p.step(np.zeros(4, np.int64), state)
    del state
    for proc in procs:
        proc.join(10)
        assert proc.exitcode == 0
    assert kernels.threads() == 2
    p.init_state(1)                                  # one stream is not split: the mixer's
    assert all(b.threads == 2 for b in p.engine.blocks)      # threads are the environment's


def test_a_daemonic_worker_does_not_split(monkeypatch):
    """A frame worker of a multiprocessing pool is daemonic: it may not start children."""
    import multiprocessing
    monkeypatch.setattr(multiprocessing.current_process(), "daemon", True)
    assert not split.can_fork() and split.parts_for(256, 2) == 1


KILLED_PARENT = """
import os, sys, numpy as np
from umoec.engine import modelfile as mf
from umoec.engine.predictor import ExactPredictor
p = ExactPredictor(mf.read(sys.argv[1]), None)
state = p.init_state(4)
print(state.children[0].proc.pid, flush=True)
while True:
    p.step(np.zeros(4, np.int64), state)
"""


def test_children_end_when_their_parent_is_killed(tiny_model, tmp_path):
    """SIGKILL leaves no time to close anything: the child sees its pipe end and exits."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from tests.conftest import ROOT
    from umoec.engine import modelfile as mf
    path = mf.write(tiny_model, tmp_path / "tiny.umm")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "UMOEC_ENGINE_THREADS": "2",
           "UMOEC_SPLIT_MIN_ROWS": "1"}
    parent = subprocess.Popen([sys.executable, "-c", KILLED_PARENT, str(path)], env=env,
                              stdout=subprocess.PIPE, text=True, cwd=ROOT)
    child = int(parent.stdout.readline())
    time.sleep(0.5)                                   # mid-coding
    parent.send_signal(signal.SIGKILL)
    parent.wait(10)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(child, 0)                         # still there (or a zombie of init)
        except ProcessLookupError:
            break
        if _zombie(child):
            break
        time.sleep(0.05)
    else:
        os.kill(child, signal.SIGKILL)
        raise AssertionError("the child outlived its killed parent")


def _zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True
