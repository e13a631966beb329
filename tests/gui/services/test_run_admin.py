"""Run management stays inside the runs folder: rename and delete refuse running runs, paths, Forge
folders and name clashes; a symlinked run is handled as a link; notes live in RUNDIR/notes.md."""
import os

import pytest

from gui.pages.runs import ids
from gui.pages.runs.callbacks import manage_action, selected_view
from gui.services import run_admin
from tests.gui.forge_fixtures import write_forge_run
from umoec.run import RunDir, RunStatus
from umoec.run.status import own_process_start


def make_run(runs_dir, name, state="completed", **status):
    run = RunDir(runs_dir / name)
    (run.root / "checkpoints").mkdir(parents=True)
    run.config_path.write_text("tier: tier1_micro\n")
    (run.checkpoints_dir / "step000010.pt").write_bytes(b"x" * 100)
    RunStatus(state=state, step=10, total_steps=10, kind="simulate", **status).write(run.status_path)
    return run


def make_running(runs_dir, name):
    """A run whose process is alive: this test process, matched by pid and start time."""
    return make_run(runs_dir, name, "running", pid=os.getpid(), proc_start=own_process_start())


class FakeLauncher:
    def __init__(self, alive_names):
        self.alive_names = alive_names

    def get(self, name):
        return type("L", (), {"alive": True, "pid": 4242})() if name in self.alive_names else None


def test_rename_sanitises_and_moves_the_folder(tmp_path):
    make_run(tmp_path, "a")
    assert run_admin.rename_run(tmp_path, "a", " my run/../x ") == "my-run-..-x"
    assert (tmp_path / "my-run-..-x" / "config.yaml").exists() and not (tmp_path / "a").exists()


@pytest.mark.parametrize("old, new, reason", [
    ("a", "b", "already exists"), ("a", "a", "already has that name"), ("a", "  ", "type a new name"),
    ("../a", "c", "is not a run"), ("nope", "c", "is not a run"), ("presets", "c", "is not a run"),
])
def test_rename_refusals(tmp_path, old, new, reason):
    make_run(tmp_path, "a")
    make_run(tmp_path, "b")
    (tmp_path / "presets").mkdir()
    with pytest.raises(run_admin.RunAdminError, match=reason):
        run_admin.rename_run(tmp_path, old, new)
    assert (tmp_path / "a").exists() and (tmp_path / "b").exists()


def test_running_runs_are_never_renamed_or_deleted(tmp_path):
    make_running(tmp_path, "live")
    make_run(tmp_path, "starting")
    for action in (lambda n: run_admin.rename_run(tmp_path, n, "z", FakeLauncher({"starting"})),
                   lambda n: run_admin.delete_run(tmp_path, n, FakeLauncher({"starting"}))):
        with pytest.raises(run_admin.RunAdminError, match="stop it first"):
            action("live")
        with pytest.raises(run_admin.RunAdminError, match="live process"):
            action("starting")
    assert (tmp_path / "live").exists() and (tmp_path / "starting").exists()


def test_delete_removes_the_folder_and_only_the_link_of_a_symlinked_run(tmp_path):
    runs = tmp_path / "runs"
    make_run(runs, "gone")
    text = run_admin.delete_run(runs, "gone")
    assert "Deleted gone (3 files" in text and not (runs / "gone").exists()
    target = make_run(tmp_path / "elsewhere", "real").root
    os.symlink(target, runs / "linked")
    assert "link" in run_admin.delete_run(runs, "linked")
    assert not os.path.lexists(runs / "linked") and (target / "config.yaml").exists()


def test_forge_runs_are_read_only(tmp_path):
    write_forge_run(tmp_path / "forge-a")
    for action in (lambda: run_admin.rename_run(tmp_path, "forge-a", "x"),
                   lambda: run_admin.delete_run(tmp_path, "forge-a"),
                   lambda: run_admin.write_notes(tmp_path, "forge-a", "hi")):
        with pytest.raises(run_admin.RunAdminError, match="read-only"):
            action()
    assert (tmp_path / "forge-a" / "log.csv").exists()
    assert selected_view(tmp_path, "forge-a")["disabled"] is True


def test_notes_round_trip_and_limit(tmp_path):
    make_run(tmp_path, "a")
    assert run_admin.read_notes(tmp_path, "a") == ""
    run_admin.write_notes(tmp_path, "a", "tries lr 1e-3\r\nsecond line")
    assert (tmp_path / "a" / "notes.md").read_text() == "tries lr 1e-3\nsecond line"
    assert run_admin.read_notes(tmp_path, "a").startswith("tries")
    with pytest.raises(run_admin.RunAdminError, match="at most"):
        run_admin.write_notes(tmp_path, "a", "x" * (run_admin.MAX_NOTES + 1))
    rows = run_admin.run_rows(tmp_path)
    assert rows[0]["run"] == "a" and rows[0]["notes"] == "tries lr 1e-3" and rows[0]["tags"] == ""
    run_admin.write_notes(tmp_path, "a", "#baseline run\nsame as #LR-sweep. but see a#b and &#38;")
    assert run_admin.run_rows(tmp_path)[0]["tags"] == "#baseline #LR-sweep"
    run_admin.write_notes(tmp_path, "a", "a bigger learning rate with muon and a longer warmup " * 3)
    note = run_admin.run_rows(tmp_path)[0]["notes"]   # cut at a word, and says so
    assert note.endswith("\u2026") and len(note) <= run_admin.NOTE_PREVIEW + 1
    assert note == "a bigger learning rate with muon and a longer warmup a bigger learning rate\u2026"


def test_delete_dialog_flow(tmp_path):
    make_run(tmp_path, "a")
    make_run(tmp_path, "b")
    ask = manage_action(ids.RUNS_DELETE_BTN, tmp_path, None, "a", None, None, None)
    assert ask["modal_open"] is True and ask["target"] == "a" and "cannot be undone" in str(ask["modal_body"])
    cancel = manage_action(ids.RUNS_DELETE_CANCEL, tmp_path, None, "a", None, None, "a")
    assert cancel["modal_open"] is False and (tmp_path / "a").exists()
    done = manage_action(ids.RUNS_DELETE_CONFIRM, tmp_path, None, "b", None, None, "a")
    assert not (tmp_path / "a").exists() and (tmp_path / "b").exists()   # the dialog's run, not the selection
    assert done["value"] == "b" and [o["value"] for o in done["options"]] == ["b"]
    renamed = manage_action(ids.RUNS_RENAME_BTN, tmp_path, None, "b", "c", None, None)
    assert renamed["value"] == "c" and (tmp_path / "c").exists()
    make_running(tmp_path, "live")
    refused = manage_action(ids.RUNS_DELETE_BTN, tmp_path, None, "live", None, None, None)
    assert refused["modal_open"] is not True and "stop it first" in str(refused["message"])
