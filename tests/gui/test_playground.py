"""The Generate tab's model work (gui/playground.py) on a really trained tiny checkpoint, and the
surprisal rendering (gui/surprisal.py): seeded sampling is reproducible, surprisal is exactly the
model's cross-entropy, jobs stream and cancel, simulated checkpoints are refused with a reason."""
import math
import threading

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from gui import playground as P
from gui import surprisal as S
from gui.callbacks import generate_callbacks as cb
from tests.conftest import ROOT
from tests.gui.playground_support import STEPS, tiny_trained_run
from umoec.codec.predictor import BOS
from umoec.compress.neural import globals_for

TEXT = b"def main(argv=None):\n    return 0\n"   # shorter than the tiny model's context (64)


@pytest.fixture(scope="module")
def ckpt():
    return tiny_trained_run() / "checkpoints" / f"step{STEPS:06d}.pt"


@pytest.fixture(scope="module")
def loaded(ckpt):
    return P.get_model(ckpt)


def test_model_is_cached_and_loaded_in_eval_mode(ckpt, loaded):
    assert P.get_model(ckpt) is loaded and loaded.step == STEPS and not loaded.model.training
    assert loaded.cfg.lora.enabled is False  # no online adaptation in the playground


def test_sampling_is_reproducible_with_a_seed(loaded):
    kw = dict(max_bytes=48, temperature=1.0, top_k=0)
    a = P.sample(loaded, b"def ", seed=7, **kw)
    assert len(a) == 48 and P.sample(loaded, b"def ", seed=7, **kw) == a
    others = {P.sample(loaded, b"def ", seed=s, **kw) for s in (8, 9, 10)}
    assert others != {a}  # other seeds, other text
    greedy = P.sample(loaded, b"def ", seed=1, max_bytes=16, temperature=0.0, top_k=0)
    assert P.sample(loaded, b"def ", seed=2, max_bytes=16, temperature=0.0, top_k=0) == greedy


def test_top_k_one_is_greedy():
    logits = torch.tensor([0.1, 3.0, 2.9, -1.0])
    gen = torch.Generator().manual_seed(0)
    assert {P.next_byte(logits, 1.5, 1, gen) for _ in range(20)} == {1}
    assert P.next_byte(logits, 0.0, 0, gen) == 1
    assert {P.next_byte(logits, 1.0, 2, gen) for _ in range(200)} <= {1, 2}


def test_sampling_settings_are_checked(loaded):
    for bad in (dict(temperature=-1), dict(top_k=300), dict(max_bytes=0),
                dict(max_bytes=P.MAX_SAMPLE_BYTES + 1), dict(seed=-1), dict(temperature="x")):
        kw = {"temperature": 1.0, "top_k": 0, "max_bytes": 4, "seed": 0, **bad}
        with pytest.raises(P.PlaygroundError):
            P.sample(loaded, b"", **kw)


def test_surprisal_is_the_models_cross_entropy(loaded):
    bits = P.surprisal_bits(loaded, TEXT)
    assert bits.shape == (len(TEXT),) and np.all(bits > 0)
    # the parallel form of the eval()'d model on [BOS] + text[:-1] predicting text
    x = torch.tensor([[BOS, *TEXT[:-1]]], dtype=torch.long)
    y = torch.tensor([list(TEXT)], dtype=torch.long)
    g = torch.from_numpy(globals_for(TEXT, loaded.cfg)).unsqueeze(0)
    with torch.no_grad():
        out = loaded.model(x, g, mode="infer")
        ce = F.cross_entropy(out.logits[0].double(), y[0], reduction="none") / math.log(2)
    np.testing.assert_allclose(bits, ce.numpy(), rtol=1e-4, atol=1e-4)
    assert bits.mean() == pytest.approx(float(ce.mean()), rel=1e-5)


def test_simulated_checkpoints_are_refused(sim_run):
    ck = sorted((sim_run / "checkpoints").glob("step*.pt"))[-1]
    with pytest.raises(P.PlaygroundError, match="simulated"):
        P.get_model(ck)
    view = cb.checkpoint_view(sim_run.parent, sim_run.name, None)
    assert view["disabled"] and "simulated run" in str(view["info"])


def test_checkpoint_choice_stays_inside_the_run(ckpt):
    run = ckpt.parents[1]
    assert cb.checkpoint_path(run.parent, run.name, ckpt.name) == ckpt
    for bad in ("../config.yaml", "/etc/passwd", "step999999.pt"):
        with pytest.raises(ValueError):
            cb.checkpoint_path(run.parent, run.name, bad)
    view = cb.checkpoint_view(run.parent, run.name, None)
    assert view["value"] == ckpt.name and not view["disabled"]


def wait(job, timeout=120.0):
    done = threading.Event()
    while not done.wait(0.05):
        if job.finished or timeout <= 0:
            break
        timeout -= 0.05
    assert job.finished, job.view()


def test_sample_job_streams_what_sample_returns(ckpt, loaded):
    run = ckpt.parents[1]
    started = cb.start_sample(run.parent, run.name, ckpt.name, "def ", 0.8, 40, 64, 3, None)
    job = P.JOBS.get(started["job"])
    wait(job)
    v = job.view()
    assert v["phase"] == "done" and v["progress"] == 64 and v["step"] == STEPS
    assert v["out"] == P.sample(loaded, b"def ", temperature=0.8, top_k=40, max_bytes=64, seed=3)
    polled = cb.poll_sample(job.id)
    assert polled["poll_disabled"] and "Done: 64 bytes" in str(polled["status"])
    assert polled["output"][1].children == cb.escape_text(v["out"])
    refused = cb.start_sample(run.parent, run.name, ckpt.name, "x", 9.0, 40, 64, 3, job.id)
    assert refused["job"] is None and "temperature 9" in str(refused["status"])


def test_cancel_stops_a_job(ckpt):
    jobs = P.Jobs()
    job = jobs.start_sample(ckpt, b"", temperature=1.0, top_k=0, max_bytes=P.MAX_SAMPLE_BYTES,
                            seed=0)
    while job.view()["progress"] == 0 and not job.finished:
        threading.Event().wait(0.02)
    assert jobs.cancel(job.id)
    wait(job)
    v = job.view()
    assert v["phase"] == "cancelled" and 0 < v["progress"] < P.MAX_SAMPLE_BYTES
    assert not jobs.cancel(job.id)  # finished: nothing to cancel


def test_score_job_and_failures(ckpt, loaded, tmp_path):
    jobs = P.Jobs()
    job = jobs.start_score(ckpt, TEXT)
    wait(job)
    np.testing.assert_array_equal(job.view()["bits"], P.surprisal_bits(loaded, TEXT))
    bad = tmp_path / "step000001.pt"
    bad.write_bytes(ckpt.read_bytes()[:4096])  # truncated
    failed = jobs.start_score(bad, b"abc")
    wait(failed)
    assert failed.view()["phase"] == "failed" and "damaged or truncated" in failed.view()["error"]
    with pytest.raises(P.PlaygroundError, match="limit"):
        jobs.start_score(ckpt, b"x" * (P.MAX_SCORE_BYTES + 1))
    with pytest.raises(P.PlaygroundError, match="paste some text"):
        jobs.start_score(ckpt, b"")


# -- rendering (no torch needed) --------------------------------------------------------------------
def test_characters_group_utf8_and_escape_the_rest():
    data = "a\u00e9\n".encode() + b"\xff\x07"
    chars = S.split_chars(data)
    assert [(s, n) for s, n, _ in chars] == [(0, 1), (1, 2), (3, 1), (4, 1), (5, 1)]
    assert [t for _, _, t in chars] == ["a", "\u00e9", "\u23ce\n", "\\xff", "\\x07"]


def test_bins_and_palette_match_the_stylesheet():
    assert [S.bin_of(b) for b in (0.0, 0.49, 0.5, 7.9, 8.0, 30.0, float("inf"))] == \
        [0, 0, 1, 15, 16, 16, 16]
    css = (ROOT / "gui" / "assets" / "20_datasets_generate_notify.css").read_text()
    for k, colour in enumerate(S.PALETTE):
        assert f".sp-{k} {{ background-color: {colour};" in css
    assert len(S.PALETTE) == S.N_BINS


def test_render_and_summary():
    data = "h\u00e9".encode()
    bits = [1.0, 3.0, 5.0]
    spans = S.render(data, bits)
    assert [sp.className for sp in spans] == ["sp-2", "sp-8"]   # é: mean of 3 and 5 bits
    assert "2 bytes, 8.00 bits" in spans[1].title
    s = S.summary(data, bits)
    assert s["bits"] == 9.0 and s["bpb"] == 3.0 and s["ideal_bytes"] == 2
    assert s["worst"][0] == ("\u00e9", 8.0)
    assert [sp.className for sp in S.render(data, bits[:1])] == ["sp-2", "sp-none"]
