"""The analysis tabs' probe: its empty states say how to make a run in the runs folder in use."""
from gui.services import analysis


def test_no_run_names_the_runs_folder_in_use(tmp_path):
    runs = tmp_path / "elsewhere"
    p = analysis.probe(runs, None, "routing_stats", lambda *a: "")
    assert p.message.startswith("No run selected") and str(runs / "demo") in p.message
    assert "runs/demo" not in p.message.replace(str(runs / "demo"), "")
