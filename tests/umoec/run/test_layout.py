"""Run folder layout: checkpoint names, listing, log tail, atomic writes."""
import os

from umoec.run import RunDir
from umoec.run.atomic import atomic_write_bytes
from umoec.run.layout import list_runs


def test_paths_follow_the_contract(tmp_path):
    run = RunDir(tmp_path / "r")
    assert run.checkpoint_path(42).name == "step000042.pt"
    assert [p.name for p in (run.config_path, run.db_path, run.log_path, run.csv_path,
                             run.status_path)] == ["config.yaml", "metrics.db", "training.log",
                                                   "log.csv", "status.json"]


def test_the_cockpit_file_names_are_the_documented_ones(tmp_path):
    """The files the cockpit writes (CONTRACTS.md "A run folder"); tests/gui/test_run_files.py
    checks that the cockpit writes no other."""
    run = RunDir(tmp_path / "r")
    assert [p.relative_to(run.root).as_posix() for p in (
        run.launch_config_path, run.launch_info_path, run.process_log_path, run.notes_path,
        run.compressed_dir, run.job_sidecar_path(7),
        run.compressed_output_path("20240101-120000", "a.txt"),
        run.compressed_output_path("20240101-120000", "a.txt", 2), run.model_path(30))] == [
        "launch.yaml", "launch.json", "process.log", "notes.md", "compressed",
        "compressed/job-000007.json", "compressed/20240101-120000-a.txt.umc",
        "compressed/20240101-120000-2-a.txt.umc", "models/step000030.umm"]


def test_checkpoints_are_sorted_and_temp_files_ignored(tmp_path):
    run = RunDir(tmp_path)
    run.checkpoints_dir.mkdir()
    for name in ("step000200.pt", "step000010.pt", ".step000300.pt.abc.tmp", "notes.txt",
                 "step1234567.pt"):
        (run.checkpoints_dir / name).write_bytes(b"x")
    assert [c.step for c in run.checkpoints()] == [10, 200, 1234567]
    assert run.latest_checkpoint().step == 1234567


def test_tail_log_reads_only_the_end(tmp_path):
    run = RunDir(tmp_path)
    run.log_path.write_text("".join(f"line {i}\n" for i in range(100_000)))
    tail = run.tail_log(100, max_bytes=4096)
    assert tail[-1] == "line 99999" and len(tail) == 100
    assert RunDir(tmp_path / "none").tail_log() == []


def test_list_runs_finds_run_folders_only(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "config.yaml").write_text("x")
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "status.json").write_text("{}")
    (tmp_path / "junk").mkdir()
    (tmp_path / "file.txt").write_text("x")
    assert sorted(r.name for r in list_runs(tmp_path)) == ["a", "b"]
    assert list_runs(tmp_path / "missing") == []


def test_atomic_write_replaces_whole_file_with_normal_permissions(tmp_path):
    target = tmp_path / "f.bin"
    atomic_write_bytes(target, b"old")
    atomic_write_bytes(target, b"new")
    assert target.read_bytes() == b"new" and os.listdir(tmp_path) == ["f.bin"]
    assert oct(target.stat().st_mode & 0o777) != oct(0o600)


def test_atomic_write_failure_leaves_old_file(tmp_path):
    from umoec.run.atomic import atomic_write
    target = tmp_path / "f.txt"
    target.write_text("intact")

    def explode(fh):
        fh.write("half")
        raise OSError("disk full")
    try:
        atomic_write(target, explode, "w")
    except OSError:
        pass
    assert target.read_text() == "intact" and os.listdir(tmp_path) == ["f.txt"]


def test_stale_temp_files_are_removed(tmp_path):
    run = RunDir(tmp_path)
    run.checkpoints_dir.mkdir()
    (run.checkpoints_dir / ".step000004.pt.abc.tmp").write_bytes(b"half")
    (run.root / ".status.json.x.tmp").write_text("{")
    (run.checkpoints_dir / "step000004.pt").write_bytes(b"whole")
    assert run.remove_stale_temp_files() == 2
    assert [p.name for p in run.checkpoints_dir.iterdir()] == ["step000004.pt"]
