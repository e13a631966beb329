"""Compression and Evaluation tabs with real models: the worker end to end with the shipped
default model (a simulated run, no training: the `make demo` story), damaged and missing models,
exporting a real (tiny) checkpoint to a model that the dropdowns then list, evaluating a model, and
the tabs in a browser (upload, compress, baselines, verify PASS, tampered FAIL, upload names, size
limit, missing file, reload during a job, cancel, Export model, evaluation).

One trained run and one cockpit process for the whole module."""
from __future__ import annotations

import base64
import re
import shutil
from pathlib import Path

import pytest

from gui import ids
from gui.pages.compression import ids as compression_ids
from gui.pages.compression.callbacks import REFRESH_OUTPUTS, refresh_view
from gui.pages.compression.layout import profile_options
from gui.pages.evaluation import ids as evaluation_ids
from gui.pages.evaluation.callbacks import EVAL_OUTPUTS, eval_view
from gui.pages.training import ids as training_ids
from gui.pages.training.callbacks import checkpoint_list, checkpoint_models
from gui.services import models
from gui.services.compress_jobs import JobManager, read_sidecar
from gui.services.models import CHECKPOINT_CHOICE
from tests.conftest import ROOT, run_module
from tests.gui.analysis_support import browser_page, open_tab, shot, wait_for_traces, wait_until
from tests.gui.browser_util import wait_text
from tests.gui.services.test_compress_jobs import default_name_hash, other_model
from tests.gui.test_app_server import start_app
from tests.umoec.compress.test_choose import table
from tests.umoec.train.conftest import tiny_args
from umoec.metrics import read
from umoec.run import RunDir

MAX_UPLOAD_MB = 0.05  # 50 kB: small enough to test the limit with a small file
# One torch thread: on a busy 2-core machine, spinning OpenMP threads slow the tiny model ~30x.
ONE_THREAD = {"OMP_NUM_THREADS": "1"}


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory) -> Path:
    from umoec.data import prepare
    out = tmp_path_factory.mktemp("c8-data") / "small"
    prepare(out, max_bytes=200_000)
    return out


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory, data_dir) -> RunDir:
    """A trained 8-step run (checkpoints at steps 4 and 8) alone in its runs folder."""
    out = tmp_path_factory.mktemp("c8-runs") / "tiny"
    res = run_module("bin.train", "--out", str(out), *tiny_args(data_dir, 8), timeout=600,
                     env=ONE_THREAD)
    assert res.returncode == 0, res.stderr
    return RunDir(out)


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("c8-uploads") / "sandbox"


@pytest.fixture(scope="module")
def cockpit_url(tiny_run, sandbox):
    with pytest.MonkeyPatch.context() as mp:  # the cockpit's workers inherit its environment
        mp.delenv("ENWIK8", raising=False)
        for key, value in ONE_THREAD.items():
            mp.setenv(key, value)
        proc, url = start_app(tiny_run.root.parent, "--refresh-ms", "1000", "--upload-dir",
                              str(sandbox), "--max-upload-mb", str(MAX_UPLOAD_MB),
                              "--job-timeout", "600")
    try:
        yield url
    finally:
        proc.terminate()
        proc.wait(20)


def sample(data_dir: Path, n: int) -> bytes:
    return (data_dir / "val.bin").read_bytes()[:n]


# -- without a browser --------------------------------------------------------------------------
def test_simulated_checkpoint_is_refused_with_the_loaders_message(sim_run, tmp_path, monkeypatch):
    for key, value in ONE_THREAD.items():
        monkeypatch.setenv(key, value)
    runs = tmp_path / "runs"
    shutil.copytree(sim_run, runs / sim_run.name)
    run = RunDir(runs / sim_run.name)
    src = tmp_path / "in.txt"
    src.write_text("some text to compress\n" * 20)
    jobs = JobManager(runs)
    job = jobs.start_compress(run, str(src), "turbo", run.checkpoints()[-1].path.name,
                              model=CHECKPOINT_CHOICE)
    assert job.finished.wait(120)
    assert job.state == "failed"
    assert "is a simulated checkpoint (no weights); train a real run with bin.train" in job.message
    with read.open_db(run.db_path) as conn:
        newest = read.compression_jobs(conn).iloc[0].to_dict()
    assert newest["status"].startswith("failed: ") and "simulated checkpoint" in newest["status"]


def finished(job, seconds: float = 180):
    assert job.finished.wait(seconds), f"the {job.kind} job never ended"
    return job


def newest_row(run: RunDir) -> dict:
    with read.open_db(run.db_path) as conn:
        return read.compression_jobs(conn).iloc[0].to_dict()


def test_demo_run_compresses_with_the_default_model_and_verifies(sim_run, tmp_path, monkeypatch):
    """The key story: a fresh simulated run (no trained checkpoint), the model the tab preselects
    (the shipped default), Compress, then Verify Roundtrip with the model the file names."""
    for key, value in ONE_THREAD.items():
        monkeypatch.setenv(key, value)
    runs = tmp_path / "runs"
    shutil.copytree(sim_run, runs / sim_run.name)
    run = RunDir(runs / sim_run.name)
    name, digest = default_name_hash()
    options, preselected, _ = models.model_options(runs, run)
    assert preselected == digest and options[0]["value"] == digest
    src = tmp_path / "notes.txt"
    src.write_bytes((ROOT / "README.md").read_bytes()[:2500])
    jobs = JobManager(runs)
    job = finished(jobs.start_compress(run, str(src), "turbo", model=preselected))
    assert job.state == "done", job.message
    assert job.result["model"] == f"{name} ({digest[:12]})" and job.result["model_hash"] == digest
    row = newest_row(run)
    assert row["status"] == "done" and row["raw_bytes"] == 2500
    side = read_sidecar(run, int(row["job_id"]))
    assert side["model"] == f"{name} ({digest[:12]})" and "threads" not in side
    verify = finished(jobs.start_verify(run, int(row["job_id"]), row))
    assert verify.result["ok"] is True, verify.result
    assert f"decoded with model {name} ({digest[:12]})" in verify.result["reason"]
    out = refresh_view(jobs, runs, run.name, None, None, None)
    assert "PASS" in str(out["verify"]) and f"{name} ({digest[:12]})" in str(out["table"])
    assert f"model {name} ({digest[:12]})" in str(out["status"])  # the status line names the model


def test_auto_records_the_profile_it_chose_and_the_file_verifies(sim_run, tmp_path, monkeypatch):
    """The auto profile offered by the tab: a table of hex numbers goes to the mixing stage
    alone, the row says so ("auto: cm"), and the file verifies without a model."""
    for key, value in ONE_THREAD.items():
        monkeypatch.setenv(key, value)
    runs = tmp_path / "runs"
    shutil.copytree(sim_run, runs / sim_run.name)
    run = RunDir(runs / sim_run.name)
    assert "auto" in [o["value"] for o in profile_options()]
    src = tmp_path / "numbers.csv"
    src.write_bytes(table(6000))
    jobs = JobManager(runs)
    job = finished(jobs.start_compress(run, str(src), "auto", model="default"))
    assert job.state == "done" and job.result["profile"] == "cm", job.message
    row = newest_row(run)
    assert row["status"] == "done" and row["profile"] == "auto: cm"
    verify = finished(jobs.start_verify(run, int(row["job_id"]), row))
    assert verify.result["ok"] is True, verify.result


def test_damaged_and_missing_models_are_clear_messages(sim_run, tmp_path, monkeypatch):
    for key, value in ONE_THREAD.items():
        monkeypatch.setenv(key, value)
    runs = tmp_path / "runs"
    shutil.copytree(sim_run, runs / sim_run.name)
    run = RunDir(runs / sim_run.name)
    run.models_dir.mkdir()
    damaged = other_model(run.models_dir / "damaged.umm", "broken", damage=True)
    good = other_model(run.models_dir / "good.umm", "good", delta=2)
    values = [o["value"] for o in models.model_options(runs, run)[0]]
    assert damaged.hash in values  # its header reads fine: only using it finds the damage
    src = tmp_path / "in.txt"
    src.write_text("a few words to compress\n" * 40)
    jobs = JobManager(runs)
    job = finished(jobs.start_compress(run, str(src), "turbo", model=damaged.hash))
    assert job.state == "failed"
    assert f"model file {run.models_dir / 'damaged.umm'}: damaged: its content gives hash" in \
        job.message and "Error:" not in job.message and "Traceback" not in job.message
    status = str(refresh_view(jobs, runs, run.name, None, None, None)["status"])
    assert "damaged: its content gives hash" in status and "color='danger'" in status
    job = finished(jobs.start_compress(run, str(src), "turbo", model=good.hash))
    assert job.state == "done", job.message
    row = newest_row(run)
    (run.models_dir / "good.umm").unlink()  # the model the file names is gone
    verify = finished(jobs.start_verify(run, int(row["job_id"]), row))
    assert verify.result["ok"] is False
    assert f"this file needs model good (hash {good.hash[:16]}), which is not on the search " \
           "path" in verify.result["reason"]
    assert "FAIL" in str(refresh_view(jobs, runs, run.name, None, None, None)["verify"])
    job = jobs.start_compress(run, str(src), "turbo", model=good.hash)  # chosen, then gone
    assert job.state == "failed" and "is no longer on the model search path" in job.message


def test_export_writes_a_model_that_the_lists_offer(tiny_run, tmp_path, monkeypatch):
    """Export model on a real checkpoint (worker, torch), then the model in both dropdowns, in the
    checkpoint list, and a compression with it that verifies."""
    for key, value in ONE_THREAD.items():
        monkeypatch.setenv(key, value)
    runs = tiny_run.root.parent
    jobs = JobManager(runs)
    before = [o["label"] for o in models.model_options(runs, tiny_run)[0]]
    assert not any("tiny-step4" in label for label in before)
    job = finished(jobs.start_export(tiny_run, "step000004.pt"), 300)
    assert job.state == "done", job.message
    path = tiny_run.model_path(4)
    assert job.result["path"] == str(path) and path.is_file()
    label = f"tiny-step4 · {job.result['model_hash'][:12]} · run tiny"
    options, default, _ = models.model_options(runs, tiny_run)
    assert label in [o["label"] for o in options] and options[0]["value"] == default
    cks = tiny_run.checkpoints()
    listed = str(checkpoint_list(cks, checkpoint_models(tiny_run, cks)))
    assert job.result["model"] in listed  # 'tiny-step4 (hash12)' instead of the button
    src = tmp_path / "in.txt"
    src.write_bytes(sample_text(1500))
    done = finished(jobs.start_compress(tiny_run, str(src), "fast",
                                             model=job.result["model_hash"]))
    assert done.state == "done" and done.result["model"] == job.result["model"], done.message
    row = newest_row(tiny_run)
    assert row["checkpoint"] == str(path)
    verify = finished(jobs.start_verify(tiny_run, int(row["job_id"]), row))
    assert verify.result["ok"] is True, verify.result


def test_eval_of_the_default_model_is_recorded_under_its_name(tiny_run, monkeypatch):
    for key, value in ONE_THREAD.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("ENWIK8", raising=False)
    if (ROOT / "data" / "enwik8").is_file():
        pytest.skip("data/enwik8 exists: this test reads the run's validation split")
    runs = tiny_run.root.parent
    jobs = JobManager(runs)
    name, digest = default_name_hash()
    job = finished(jobs.start_eval(tiny_run, None, 1000, "turbo", model=digest), 300)
    assert job.state == "done", job.message
    tag = f"small-val[:1000] · model {name} ({digest[:12]})"
    assert job.result["dataset"] == tag and job.result["roundtrip_ok"] is True
    with read.open_db(tiny_run.db_path) as conn:
        evals = read.eval_results(conn)
    assert tag in evals["dataset"].tolist()
    ev = eval_view(jobs, runs, tiny_run.name, None, None)
    table = str(ev["table"])
    assert tag in table and "1.10 M" in table and "evaluated that coding model" in table


def test_switching_to_a_run_with_a_damaged_database_clears_the_previous_runs_view(sim_run,
                                                                                tmp_path):
    """The simulated run's jobs, chart and verdicts must not stay on screen under the name of a
    run whose metrics.db cannot be read, nor promise a retry that cannot succeed."""
    runs = tmp_path / "runs"
    shutil.copytree(sim_run, runs / "good")
    shutil.copytree(sim_run, runs / "bad")
    (runs / "bad" / "metrics.db").write_bytes(b"this is not sqlite" * 200)
    jobs = JobManager(runs)
    first = refresh_view(jobs, runs, "good", None, None, None)
    out = refresh_view(jobs, runs, "bad", None, None, first["version"])
    assert "file is damaged or not a database" in str(out["status"])
    assert "next refresh will try again" not in str(out["status"])
    assert "sample-1MiB.txt" not in str(out["table"])
    assert out["job_options"] == [] and out["job_value"] is None
    assert "cannot be read" in str(out["figure"].layout.annotations[0].text)
    ev = eval_view(jobs, runs, "bad", None, None)
    assert "file is damaged" in str(ev["status"])
    assert "cannot be read" in str(ev["figure"].layout.annotations[0].text)
    for view, names in ((out, REFRESH_OUTPUTS), (ev, EVAL_OUTPUTS), (first, REFRESH_OUTPUTS)):
        assert set(view) == set(names), view.keys()   # every output, by name


def test_simulated_rows_display_as_such(sim_run):
    jobs = JobManager(sim_run.parent)
    out = refresh_view(jobs, sim_run.parent, sim_run.name, None, None, None)
    table = str(out["table"])
    assert "simulated" in table and "sample-1MiB.txt" in table
    assert "no file was compressed" in table
    assert out["job_options"] == [] and out["verify_disabled"] is True  # nothing to verify
    ev = eval_view(jobs, sim_run.parent, sim_run.name, None, None)
    assert "simulated" in str(ev["table"]) and "(simulated)" in str(ev["roundtrip"])
    assert any(t.name.endswith("(simulated)") for t in ev["figure"].data)


# -- browser ------------------------------------------------------------------------------------
def upload(page, name: str, data: bytes) -> None:
    """Choose a file in the upload box the way a browser does (a File with any name)."""
    page.evaluate("""([name, b64]) => {
        const bytes = Uint8Array.from(atob(b64), c => c.charCodeAt(0));
        const dt = new DataTransfer();
        dt.items.add(new File([bytes], name, {type: 'application/octet-stream'}));
        const input = document.querySelector('#compress-file-upload input[type=file]');
        input.files = dt.files;
        input.dispatchEvent(new Event('change', {bubbles: true}));
    }""", [name, base64.b64encode(data).decode()])


def jobs_of(run: RunDir) -> list[dict]:
    with read.open_db(run.db_path) as conn:
        return read.compression_jobs(conn).to_dict("records")


def sample_text(n: int) -> bytes:
    return (ROOT / "README.md").read_bytes()[:n]


def decoder_message(umc: Path) -> str:
    """What the decoder says about `umc`, with the model the file names."""
    from umoec.codec.errors import CodecError
    from umoec.compress.api import decompress_path
    try:
        decompress_path(umc, umc.with_suffix(".out"))
    except CodecError as exc:
        return str(exc)
    raise AssertionError("the tampered file decoded")


@pytest.mark.browser
def test_upload_compress_verify_then_tampered_fails(browser, cockpit_url, tiny_run, sandbox,
                                                    data_dir):
    with browser_page(browser, cockpit_url) as page:
        open_tab(page, "Compression")
        wait_text(page, f"#{compression_ids.COMPRESS_UPLOAD_HINT}", str(sandbox))
        upload(page, "sample.txt", sample(data_dir, 3000))
        wait_text(page, f"#{compression_ids.COMPRESS_UPLOAD_STATUS}", "stored as")
        stored = Path(page.input_value(f"#{compression_ids.COMPRESS_FILE_PATH}"))
        assert stored.parent == sandbox.resolve() and stored.read_bytes() == sample(data_dir, 3000)
        name, digest = default_name_hash()
        chosen = wait_text(page, f"#{ids.COMPRESS_MODEL}", f"{name} · {digest[:12]} · shipped")
        assert "default" in chosen  # preselected: no training needed
        assert page.is_disabled(f"#{ids.COMPRESS_CHECKPOINT}")  # used only for checkpoints
        page.click(f"#{compression_ids.COMPRESS_BTN}")
        wait_text(page, f"#{compression_ids.COMPRESS_STATUS}", "done", timeout_ms=180_000)
        table = wait_text(page, f"#{compression_ids.COMPRESS_RESULTS_TABLE}", "brotli -11 (same file)")
        for text in ("sample.txt", "turbo", "3.00 kB", "done", "gzip -9 (same file)",
                     "zstd -22 (same file)", "xz -9e (same file)", f"{name} ({digest[:12]})",
                     "Model"):
            assert text in table
        names = [t["name"] for t in wait_for_traces(page, compression_ids.COMPRESS_COMPARISON)]
        assert names  # one bar trace: ours and the four baselines
        row = jobs_of(tiny_run)[0]
        assert row["status"] == "done" and row["raw_bytes"] == 3000
        assert Path(row["output_path"]).parent == tiny_run.root / "compressed"
        page.click(f"#{compression_ids.COMPRESS_VERIFY_BTN}")
        result = wait_text(page, f"#{compression_ids.COMPRESS_VERIFY_RESULT}", "PASS", timeout_ms=120_000)
        assert "sha256 equal" in result
        assert page.eval_on_selector(f"#{compression_ids.COMPRESS_VERIFY_RESULT} .fw-bold",
                                     "e => getComputedStyle(e).color") == "rgb(25, 135, 84)"
        shot(page, "compression_verify_pass")

        umc = Path(row["output_path"])
        blob = bytearray(umc.read_bytes())
        blob[len(blob) // 2] ^= 0x55
        umc.write_bytes(bytes(blob))
        page.click(f"#{compression_ids.COMPRESS_VERIFY_BTN}")
        result = wait_text(page, f"#{compression_ids.COMPRESS_VERIFY_RESULT}", "FAIL", timeout_ms=120_000)
        reason = decoder_message(umc)
        assert reason in result
        assert page.eval_on_selector(f"#{compression_ids.COMPRESS_VERIFY_RESULT} .fw-bold",
                                     "e => getComputedStyle(e).color") == "rgb(220, 53, 69)"
        assert read_sidecar(tiny_run, int(row["job_id"]))["verify"]["ok"] is False
        shot(page, "compression_verify_fail")
        assert page.console_errors == []


@pytest.mark.browser
def test_upload_names_stay_in_the_sandbox_and_size_is_limited(browser, cockpit_url, sandbox):
    names = ["../../etc/passwd", "/etc/shadow-copy", "nul\x00byte.txt", "z" * 300]
    with browser_page(browser, cockpit_url) as page:
        open_tab(page, "Compression")
        for name in names:
            before = set(sandbox.iterdir()) if sandbox.exists() else set()
            upload(page, name, name.encode("utf-8", "replace") * 3)
            shown = repr(name.replace("\x00", "\\0"))[:60]
            wait_text(page, f"#{compression_ids.COMPRESS_UPLOAD_STATUS}", shown)
            assert "stored as" in page.inner_text(f"#{compression_ids.COMPRESS_UPLOAD_STATUS}")
            new = set(sandbox.iterdir()) - before
            assert len(new) == 1
            path = new.pop()
            assert path.parent == sandbox.resolve() and path.is_file() and not path.is_symlink()
            assert len(path.name) <= 120 and "\x00" not in path.name
            assert path.read_bytes() == name.encode("utf-8", "replace") * 3
            assert page.input_value(f"#{compression_ids.COMPRESS_FILE_PATH}") == str(path)
        assert not (sandbox.parent.parent / "etc").exists()
        count = len(list(sandbox.iterdir()))
        upload(page, "big.bin", b"\x01" * 60_000)
        msg = wait_text(page, f"#{compression_ids.COMPRESS_UPLOAD_STATUS}", "uploads are limited to")
        assert "big.bin is 60.00 kB" in msg and "50.00 kB" in msg and "type its path" in msg
        assert len(list(sandbox.iterdir())) == count
        shot(page, "compression_upload_limit")
        assert page.console_errors == []


@pytest.mark.browser
def test_missing_file_then_a_job_survives_reload_and_is_cancelled(browser, cockpit_url, tiny_run,
                                                                  tmp_path, data_dir):
    with browser_page(browser, cockpit_url) as page:
        open_tab(page, "Compression")
        page.fill(f"#{compression_ids.COMPRESS_FILE_PATH}", str(tmp_path / "no-such-file.bin"))
        page.click(f"#{compression_ids.COMPRESS_BTN}")
        status = wait_text(page, f"#{compression_ids.COMPRESS_STATUS}", "failed")
        assert f"input file {tmp_path / 'no-such-file.bin'} does not exist" in status
        wait_text(page, f"#{compression_ids.COMPRESS_RESULTS_TABLE}", "no-such-file.bin")
        assert jobs_of(tiny_run)[0]["status"].startswith("failed: input file")

        big = tmp_path / "big.txt"
        chunk = sample(data_dir, 100_000)
        big.write_bytes((chunk * (4_000_000 // len(chunk) + 1))[:4_000_000])  # minutes of work
        page.fill(f"#{compression_ids.COMPRESS_FILE_PATH}", str(big))
        page.click(f"#{compression_ids.COMPRESS_BTN}")
        wait_text(page, f"#{compression_ids.COMPRESS_STATUS}", "compressing")
        page.reload()
        open_tab(page, "Compression")
        wait_text(page, f"#{compression_ids.COMPRESS_STATUS}", "(compress big.txt): compressing")
        wait_until(lambda: page.is_visible(f"#{compression_ids.COMPRESS_PROGRESS}"), what="the progress bar")
        assert page.is_enabled(f"#{compression_ids.COMPRESS_CANCEL_BTN}")
        assert page.is_disabled(f"#{compression_ids.COMPRESS_BTN}")
        shot(page, "compression_running")
        open_tab(page, "Training")  # the page stays usable while the job runs
        open_tab(page, "Compression")
        page.click(f"#{compression_ids.COMPRESS_CANCEL_BTN}")
        wait_text(page, f"#{compression_ids.COMPRESS_STATUS}", "cancelled by the user", timeout_ms=60_000)
        row = jobs_of(tiny_run)[0]
        assert row["status"].startswith("cancelled: cancelled by the user after")
        assert not Path(row["output_path"]).exists()
        assert not list((tiny_run.root / "compressed").glob(".*.tmp"))
        assert page.console_errors == []


@pytest.mark.browser
def test_export_button_then_the_model_is_offered(browser, cockpit_url, tiny_run):
    with browser_page(browser, cockpit_url) as page:
        open_tab(page, "Training")
        button = f"#{training_ids.CHECKPOINT_LIST} button:has-text('Export model')"
        wait_until(lambda: page.locator(button).count() >= 1, what="an Export model button")
        assert not tiny_run.model_path(8).exists()
        page.locator(f"#{training_ids.CHECKPOINT_LIST} tr:has-text('step000008.pt') button").click()
        status = wait_text(page, f"#{training_ids.CHECKPOINT_EXPORT_STATUS}", "done", timeout_ms=180_000)
        assert f"written to {tiny_run.model_path(8)}" in status
        label = wait_text(page, f"#{training_ids.CHECKPOINT_LIST}", "tiny-step8 (")
        assert tiny_run.model_path(8).is_file() and "tiny-step8 (" in label
        shot(page, "training_export_model")
        open_tab(page, "Compression")
        wait_text(page, f"#{ids.COMPRESS_MODEL}", "· default")
        page.click(f"#{ids.COMPRESS_MODEL}")
        option = page.get_by_role("option", name=re.compile(r"^tiny-step8 · [0-9a-f]{12} · run tiny$"))
        wait_until(lambda: option.count() == 1, what="the exported model in the model dropdown")
        option.click()  # and it can be chosen
        wait_text(page, f"#{ids.COMPRESS_MODEL}", "tiny-step8 · ")
        assert page.is_disabled(f"#{ids.COMPRESS_CHECKPOINT}")
        assert page.console_errors == []


@pytest.mark.browser
def test_eval_fills_results_roundtrip_and_history(browser, cockpit_url, tiny_run, data_dir):
    if (ROOT / "data" / "enwik8").is_file():
        pytest.skip("data/enwik8 exists: this test checks the fallback to the validation split")
    with browser_page(browser, cockpit_url) as page:
        open_tab(page, "Evaluation")
        note = wait_text(page, f"#{evaluation_ids.EVAL_DATA_NOTE}", "validation split")
        assert str(data_dir / "val.bin") in note
        wait_until(lambda: "step 8" in page.inner_text(f"#{ids.EVAL_CHECKPOINT}"),
                   what="the checkpoint list")
        # a run with real checkpoints: its newest checkpoint is what the tab evaluates first
        wait_text(page, f"#{ids.EVAL_MODEL}", "a checkpoint of run tiny")
        page.fill(f"#{evaluation_ids.EVAL_MAX_BYTES}", "2000")
        page.press(f"#{evaluation_ids.EVAL_MAX_BYTES}", "Tab")
        page.click(f"#{evaluation_ids.EVAL_ENWIK8_BTN}")
        status = wait_text(page, f"#{evaluation_ids.EVAL_STATUS}", "done", timeout_ms=240_000)
        assert "roundtrip PASS" in status and "validation split" in status
        table = wait_text(page, f"#{evaluation_ids.EVAL_RESULTS_TABLE}", "small-val[:2000]")
        for text in ("Model Size", "vs gzip (2.7)", "vs zstd-22 (1.95)", "vs CMIX (1.23)",
                     "Delta from CMIX", "gzip -9", "xz -9e", "zstd -22", "brotli -11", "PASS",
                     "xz -9e primed", "primed: what the compressor adds"):
            assert text in table
        assert wait_text(page, f"#{evaluation_ids.EVAL_ROUNDTRIP_STATUS}", "PASS").startswith("PASS")
        names = [t["name"] for t in wait_for_traces(page, evaluation_ids.EVAL_BPB_HISTORY, at_least=2)]
        assert names[0] == "small-val[:2000]" and "gzip -9 (measured)" in names
        shot(page, "evaluation_results")
        with read.open_db(tiny_run.db_path) as conn:
            evals = read.eval_results(conn)
        own = evals[~evals["dataset"].str.contains(" · model ")]  # not the default model's
        assert own["roundtrip_ok"].tolist() == [1] and own["step"].tolist() == [8]
        assert page.console_errors == []
