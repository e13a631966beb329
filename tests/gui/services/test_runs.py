"""Cockpit helpers without a browser: run discovery, honest status labels, KPIs (the figures:
tests/gui/figures/)."""
import json

import pandas as pd

from gui.pages.training.callbacks import eta_text, kpis
from gui.services.runs import resolve, run_list, run_options, summarise
from umoec.run import RunDir, RunState


def test_run_options_and_resolve(sim_run):
    runs_dir = sim_run.parent
    options = run_options(runs_dir)
    assert options[0]["value"] == "sim600" and "completed" in options[0]["label"]
    assert resolve(runs_dir, "sim600").root == sim_run
    for evil in ("../sim600", "/etc", "..", "", None, "missing"):
        assert resolve(runs_dir, evil) is None


def test_the_run_list_adds_runs_started_here_without_a_status_yet(sim_run):
    class Launcher:
        def pending(self):
            return [sim_run.name, "fresh"]   # one already listed, one not
    listed = run_options(sim_run.parent)
    assert run_list(sim_run.parent) == listed
    assert run_list(sim_run.parent, Launcher()) == listed + [{"label": "fresh - starting",
                                                                "value": "fresh"}]


def test_summary_labels(sim_run, tmp_path):
    assert summarise(RunDir(sim_run)).label == "Completed (600 steps)"
    crashed = tmp_path / "c"
    crashed.mkdir()
    (crashed / "status.json").write_text(json.dumps({"state": "crashed", "exit_code": 7}))
    s = summarise(RunDir(crashed))
    assert s.label == "Crashed (exit code 7)" and s.colour == "danger"
    (crashed / "status.json").write_text("garbage")
    assert summarise(RunDir(crashed)).state is RunState.CRASHED


def test_kpis_and_eta():
    row = dict(step=50, bpb=3.0, loss=2.08, lr=1e-3, tokens_per_sec=12345.0, grad_norm=0.5,
               bytes_seen=2_000_000, elapsed_s=125.0)
    cards = kpis(row, 100)
    assert len(cards) == 6 and "of 100" in str(cards[0])
    train = pd.DataFrame({"step": [10, 20, 30], "elapsed_s": [1.0, 2.0, 3.0]})
    assert eta_text(train, RunState.RUNNING, 130) == "ETA 0m 10s (10.00 steps/s, 100 steps left)"
    assert eta_text(train, RunState.COMPLETED, 130) == "Run is completed; no ETA."
