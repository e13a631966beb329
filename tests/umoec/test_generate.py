"""Sampling and scoring (umoec/generate.py) on a really trained tiny checkpoint: seeded sampling
is reproducible, settings are checked, surprisal is exactly the model's cross-entropy, simulated
checkpoints are refused with a reason."""
import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from tests.gui.playground_support import STEPS, tiny_trained_run
from umoec import generate as G
from umoec.compress.neural import globals_for
from umoec.predict.protocol import BOS

TEXT = b"def main(argv=None):\n    return 0\n"   # shorter than the tiny model's context (64)


@pytest.fixture(scope="module")
def ckpt():
    return tiny_trained_run() / "checkpoints" / f"step{STEPS:06d}.pt"


@pytest.fixture(scope="module")
def loaded(ckpt):
    return G.load(ckpt)


def test_loaded_in_eval_mode_without_adaptation(loaded):
    assert loaded.step == STEPS and not loaded.model.training
    assert loaded.cfg.lora.enabled is False  # no online adaptation when sampling or scoring


def test_missing_and_simulated_checkpoints_are_refused(sim_run, tmp_path):
    with pytest.raises(G.GenerateError, match="does not exist"):
        G.load(tmp_path / "step000001.pt")
    ck = sorted((sim_run / "checkpoints").glob("step*.pt"))[-1]
    with pytest.raises(G.GenerateError, match="simulated"):
        G.load(ck)


def test_sampling_is_reproducible_with_a_seed(loaded):
    kw = dict(max_bytes=48, temperature=1.0, top_k=0)
    a = G.sample(loaded, b"def ", seed=7, **kw)
    assert len(a) == 48 and G.sample(loaded, b"def ", seed=7, **kw) == a
    others = {G.sample(loaded, b"def ", seed=s, **kw) for s in (8, 9, 10)}
    assert others != {a}  # other seeds, other text
    greedy = G.sample(loaded, b"def ", seed=1, max_bytes=16, temperature=0.0, top_k=0)
    assert G.sample(loaded, b"def ", seed=2, max_bytes=16, temperature=0.0, top_k=0) == greedy


def test_top_k_one_is_greedy():
    logits = torch.tensor([0.1, 3.0, 2.9, -1.0])
    gen = torch.Generator().manual_seed(0)
    assert {G.next_byte(logits, 1.5, 1, gen) for _ in range(20)} == {1}
    assert G.next_byte(logits, 0.0, 0, gen) == 1
    assert {G.next_byte(logits, 1.0, 2, gen) for _ in range(200)} <= {1, 2}


def test_sampling_settings_are_checked(loaded):
    for bad in (dict(temperature=-1), dict(top_k=300), dict(max_bytes=0),
                dict(max_bytes=G.MAX_SAMPLE_BYTES + 1), dict(seed=-1), dict(temperature="x")):
        kw = {"temperature": 1.0, "top_k": 0, "max_bytes": 4, "seed": 0, **bad}
        with pytest.raises(G.GenerateError):
            G.sample(loaded, b"", **kw)


def test_surprisal_is_the_models_cross_entropy(loaded):
    bits = G.surprisal_bits(loaded, TEXT)
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
