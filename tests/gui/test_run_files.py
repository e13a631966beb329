"""Every file the cockpit writes into a run folder is one umoec.run.RunDir names: a run started
from the cockpit (launch.yaml, launch.json, process.log beside the run's own files), its notes,
a compression job (its compressed/ sidecar and output) and a checkpoint exported to a model."""
import json
from pathlib import Path

from gui.services import run_admin
from gui.services.compress_jobs import JobManager
from gui.services.launcher import Launcher
from tests.gui.services.test_compress_jobs import fake_python_for
from umoec import config as C
from umoec.run import RunDir, RunState

# Stands in for `python -m umoec.compress.worker compress|export ... --output OUT ...`: writes OUT
# and reports a result, as the real worker does.
FAKE_WORKER = """
import json, os, sys
out = sys.argv[sys.argv.index("--output") + 1]
os.makedirs(os.path.dirname(out), exist_ok=True)
open(out, "wb").write(b"x")
print(json.dumps({"event": "result", "raw_bytes": 5, "packed_bytes": 1, "seconds": 0.1}))
"""


def test_rundir_names_every_file_a_cockpit_writes(tmp_path):
    runs = tmp_path / "runs"
    launcher = Launcher(runs)
    cfg = C.load_preset("tier1_micro", ["training.steps=20", "training.warmup_steps=5"])
    launched = launcher.start(cfg, "simulate", "r", rate=1000)
    assert launched.done.wait(60), "the simulated run did not finish"
    run = RunDir(launched.run_dir)
    assert run.read_status().state == RunState.COMPLETED.value
    run_admin.write_notes(runs, run.name, "first try")

    src = tmp_path / "in.txt"
    src.write_text("hello")
    ck = run.latest_checkpoint()
    jobs = JobManager(runs, python=fake_python_for(tmp_path, FAKE_WORKER))
    compress = jobs.start_compress(run, str(src), "turbo", ck.path.name)
    export = jobs.start_export(run, ck.path.name)
    for job in (compress, export):
        assert job.finished.wait(30) and job.state == "done", job.message
    output = Path(compress.argv[compress.argv.index("--output") + 1])

    named = {run.config_path, run.db_path, run.log_path, run.csv_path, run.status_path,
             run.launch_config_path, run.launch_info_path, run.process_log_path, run.notes_path,
             *(c.path for c in run.checkpoints()), run.model_path(ck.step),
             run.job_sidecar_path(compress.job_id),
             run.compressed_output_path(output.name[:15], src.name)}   # STAMP (15 chars)-NAME
    sqlite = {Path(f"{run.db_path}{suffix}") for suffix in ("-wal", "-shm", "-journal")}
    written = {p for p in run.root.rglob("*") if p.is_file()}
    assert written - sqlite == named
    assert json.loads(run.launch_info_path.read_text())["runner"] == "simulate"
    assert run.process_log_path.read_text().startswith("# cockpit: ")
    assert json.loads(run.job_sidecar_path(compress.job_id).read_text())["job_id"] == compress.job_id

