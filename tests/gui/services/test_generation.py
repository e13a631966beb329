"""The Generate tab's jobs (gui/services/generation.py) and its callbacks' bodies on a really
trained tiny checkpoint: jobs stream what umoec.generate returns, cancel, fail with a reason, and
reuse a cached model; checkpoint choices stay inside the run."""
import threading

import numpy as np
import pytest

from gui.pages.generate import callbacks as cb
from gui.services.generation import Generation
from gui.services.supervisor import Supervisor
from tests.gui.playground_support import STEPS, tiny_trained_run
from umoec import generate as G

TEXT = b"def main(argv=None):\n    return 0\n"


@pytest.fixture(scope="module")
def ckpt():
    return tiny_trained_run() / "checkpoints" / f"step{STEPS:06d}.pt"


@pytest.fixture(scope="module")
def jobs():
    return Generation(Supervisor())


@pytest.fixture(scope="module")
def loaded(ckpt, jobs):
    return jobs.model(ckpt)


def test_models_are_cached_until_the_checkpoint_changes(ckpt, jobs, loaded, tmp_path):
    assert jobs.model(ckpt) is loaded
    copy = tmp_path / ckpt.name
    copy.write_bytes(ckpt.read_bytes())
    other = jobs.model(copy)
    assert other is not loaded and jobs.model(copy) is other
    with pytest.raises(G.GenerateError, match="does not exist"):
        jobs.model(tmp_path / "gone.pt")


def test_simulated_checkpoints_are_refused_on_the_page(sim_run):
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


def test_sample_job_streams_what_sample_returns(ckpt, jobs, loaded):
    run = ckpt.parents[1]
    started = cb.start_sample(jobs, run.parent, run.name, ckpt.name, "def ", 0.8, 40, 64, 3, None)
    job = jobs.get(started["job"])
    wait(job)
    v = job.view()
    assert v["phase"] == "done" and v["progress"] == 64 and v["step"] == STEPS
    assert v["out"] == G.sample(loaded, b"def ", temperature=0.8, top_k=40, max_bytes=64, seed=3)
    polled = cb.poll_sample(jobs, job.id)
    assert polled["poll_disabled"] and "Done: 64 bytes" in str(polled["status"])
    assert polled["output"][1].children == cb.escape_text(v["out"])
    refused = cb.start_sample(jobs, run.parent, run.name, ckpt.name, "x", 9.0, 40, 64, 3, job.id)
    assert refused["job"] is None and "temperature 9" in str(refused["status"])


def test_cancel_stops_a_job(ckpt, jobs):
    job = jobs.start_sample(ckpt, b"", temperature=1.0, top_k=0, max_bytes=G.MAX_SAMPLE_BYTES,
                            seed=0)
    while job.view()["progress"] == 0 and not job.finished:
        threading.Event().wait(0.02)
    assert jobs.cancel(job.id)
    wait(job)
    v = job.view()
    assert v["phase"] == "cancelled" and 0 < v["progress"] < G.MAX_SAMPLE_BYTES
    assert not jobs.cancel(job.id)  # finished: nothing to cancel


def test_score_job_and_failures(ckpt, jobs, loaded, tmp_path):
    job = jobs.start_score(ckpt, TEXT)
    wait(job)
    np.testing.assert_array_equal(job.view()["bits"], G.surprisal_bits(loaded, TEXT))
    polled = cb.poll_score(jobs, job.id)
    assert polled["poll_disabled"] and polled["cancel_disabled"] and "Scored" in str(polled["status"])
    assert "bpb" in str(polled["summary"]) and polled["view"]
    bad = tmp_path / "step000001.pt"
    bad.write_bytes(ckpt.read_bytes()[:4096])  # truncated
    failed = jobs.start_score(bad, b"abc")
    wait(failed)
    assert failed.view()["phase"] == "failed" and "damaged or truncated" in failed.view()["error"]
    with pytest.raises(G.GenerateError, match="limit"):
        jobs.start_score(ckpt, b"x" * (G.MAX_SCORE_BYTES + 1))
    with pytest.raises(G.GenerateError, match="paste some text"):
        jobs.start_score(ckpt, b"")
