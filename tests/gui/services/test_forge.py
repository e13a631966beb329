"""The cockpit's Forge runs: found only inside the runs folder or when opened by path (and
remembered), their logs cached, and the Training tab's Forge view (the folder format itself:
tests/umoec/run/test_forge.py)."""

import pytest
from dash import no_update

from gui.pages.training.callbacks import training_update
from gui.services import forge
from tests.gui.forge_fixtures import HEADER7, row, write_forge_run
from umoec.run.forge import ForgeFormatError


def text(*lines, end="\n"):
    return "\n".join(lines) + end


def test_a_forge_run_before_its_first_checkpoint_is_listed(tmp_path):
    (tmp_path / "no_ckpt").mkdir()
    (tmp_path / "no_ckpt" / "log.csv").write_text(HEADER7 + "\n0,5.5,0.001,1.0,100,-1,0.5\n")
    assert [o["value"] for o in forge.forge_options(tmp_path)] == ["no_ckpt"]


def test_only_runs_dir_children_or_opened_folders_resolve(tmp_path):
    runs = tmp_path / "runs"
    write_forge_run(runs / "inside")
    outside = write_forge_run(tmp_path / "elsewhere" / "out")
    reg = forge.ForgeRegistry()
    assert forge.resolve_forge(runs, "inside", reg).label == "inside (Forge, read-only)"
    assert forge.resolve_forge(runs, "../elsewhere/out", reg) is None
    key = forge.external_key(outside)
    assert forge.resolve_forge(runs, key, reg) is None          # not opened: not readable
    run = forge.open_path(str(outside / "log.csv"), reg)        # the log file's folder is opened
    assert run.key == key and forge.resolve_forge(runs, key, reg).path == outside.resolve()
    assert [o["value"] for o in forge.forge_options(runs, reg)] == ["inside", key]


def test_open_path_refuses_with_reasons(tmp_path, sim_run):
    reg = forge.ForgeRegistry()
    for given, reason in [("", "type the path"), (str(tmp_path / "nope"), "no such folder"),
                          (str(tmp_path), "no log.csv"), (str(sim_run), "not a Forge one")]:
        with pytest.raises(ForgeFormatError, match=reason):
            forge.open_path(given, reg)
    assert reg.paths() == []


def test_parsed_log_is_cached_until_the_file_changes(tmp_path):
    run = forge.ForgeRun(write_forge_run(tmp_path / "f", steps=100), "f")
    first = run.read_log()
    assert run.read_log() is first
    with open(run.log_path, "a") as fh:
        fh.write(row(100, 50.0) + "\n")
    assert run.read_log() is not first and run.read_log().train["step"].iloc[-1] == 100


# -- the Training tab -------------------------------------------------------------------------
def test_training_tab_shows_a_forge_run_read_only(tmp_path):
    write_forge_run(tmp_path / "forge-a", steps=300, resume_from=200, resume_upto=260)
    out = training_update(tmp_path, "forge-a", 0.6, False, None)
    assert out["loss"].layout.yaxis.title.text.startswith("bits per token")
    assert [t.name for t in out["loss"].data][:3] == ["train bits/token",
                                                       "train bits/token (EMA 0.60)",
                                                       "val bits/token"]
    assert len(out["loss"].data[0].x) == 300
    assert out["ck_options"] == [] and out["ck_value"] is None  # no resume from the cockpit
    assert "ckpt_000300.bin" in str(out["checkpoints"]) and "latest" in str(out["checkpoints"])
    assert "(Forge, read-only)" in str(out["error"]) and "resume" in str(out["error"])
    assert out["log"].splitlines()[-1].startswith("299,")
    again = training_update(tmp_path, "forge-a", 0.6, False, out["state"])
    assert all(v is no_update for v in again.values())          # unchanged log: nothing sent
    # no empty checkpoint picker and Resume button above its filled checkpoint table
    from gui.pages.training.callbacks import resume_controls_class
    assert resume_controls_class(tmp_path, "forge-a") == "d-none"
    assert resume_controls_class(tmp_path, "not-there") == "d-flex align-items-center mb-2"


def test_an_unchanged_forge_run_is_not_resent_after_the_browser_kept_its_state(tmp_path):
    """The state goes through the browser, where numbers are doubles: a signature holding
    st_mtime_ns (~1.8e18 > 2**53) came back rounded, never matched, and the run was redrawn
    every tick (undoing any zoom)."""
    import json
    write_forge_run(tmp_path / "forge-a", steps=50)
    out = training_update(tmp_path, "forge-a", 0.6, False, None)
    assert out["lr"].data[0].name == "lr"              # not "lr (AdamW)": Forge's optimizer
    browser = json.loads(json.dumps(out["state"]), parse_int=lambda s: int(float(s)))
    again = training_update(tmp_path, "forge-a", 0.6, False, browser)
    assert all(v is no_update for v in again.values())


def test_compression_evaluation_and_generation_say_a_forge_run_cannot_be_used(tmp_path):
    """Not "No run selected": the run is selected, it just cannot be loaded as a model here."""
    from gui.pages.compression.callbacks import refresh_view
    from gui.pages.evaluation.callbacks import eval_view
    from gui.pages.generate.callbacks import checkpoint_view
    from gui.services.compress_jobs import JobManager
    write_forge_run(tmp_path / "forge-a", steps=300)
    jobs = JobManager(tmp_path)
    texts = {"compression": str(refresh_view(jobs, tmp_path, "forge-a", None, None, None)["status"]),
             "evaluation": str(eval_view(jobs, tmp_path, "forge-a", None, None)["status"]),
             "generation": str(checkpoint_view(tmp_path, "forge-a", None)["info"])}
    for what, text in texts.items():
        assert "is a Forge run" in text and f"so {what} cannot use it" in text, text
        assert "No run selected" not in text
    assert "No run selected" in str(eval_view(jobs, tmp_path, None, None, None)["status"])


def test_opened_forge_folders_are_remembered_across_restarts(tmp_path):
    store = tmp_path / "runs" / forge.OPENED_FILE
    a = write_forge_run(tmp_path / "elsewhere" / "a", steps=100)
    b = write_forge_run(tmp_path / "elsewhere" / "b", steps=100)
    reg = forge.ForgeRegistry(store)
    reg.add(a)
    reg.add(b)
    assert forge.ForgeRegistry(store).paths() == [a.resolve(), b.resolve()]   # a restart
    import shutil
    shutil.rmtree(b)                                   # gone since: not listed again
    assert forge.ForgeRegistry(store).paths() == [a.resolve()]
    store.write_text("{not json")
    assert forge.ForgeRegistry(store).paths() == []    # a damaged file costs the list, not the app
