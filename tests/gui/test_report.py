"""A run's HTML report (gui/report.py): self-contained (plotly inlined once, no server, no
network), with the charts, evaluations, compression jobs and the config, every value escaped."""
import re

from gui.pages.training.callbacks import report_download
from tests.gui.services.test_compare import make_run
from umoec.metrics import TrainingDB


def test_report_holds_charts_tables_and_config_and_needs_no_network(tmp_path):
    run = make_run(tmp_path, "r<1>", steps=range(10, 501, 10))
    with TrainingDB(run.db_path) as db:
        db.insert_system_metrics(500, cpu_percent=99.0, rss_bytes=2e8, disk_free_bytes=1e10)
        db.insert_eval_result(500, "small-val", bpb=2.5, compressed_bytes=625, original_bytes=2000,
                              roundtrip_ok=True)
        db.insert_eval_baseline(500, "small-val", "gzip -9", compressed_bytes=900,
                                original_bytes=2000, seconds=0.01)
        job = db.start_compression_job("/tmp/<in>.txt", "out.umc", "turbo", "step000500.pt")
        db.finish_compression_job(job, "done", raw_bytes=2000, compressed_bytes=500, elapsed_s=1.5)
    out = report_download(tmp_path, "r<1>")
    assert out["filename"] == "r<1>-report.html" and out["type"] == "text/html"
    text = out["content"]
    assert text.startswith("<!doctype html>") and text.count("/* plotly.js ") == 1
    assert len(re.findall(r"<script[^>]+src=", text)) == 0        # nothing fetched from anywhere
    for title in ("Bits per byte", "Learning rate and gradient norm", "System", "Evaluation",
                  "Compression jobs", "Config"):
        assert f"<h2>{title}</h2>" in text
    assert "gzip -9" in text and "&lt;in&gt;.txt" in text and "<in>" not in text  # escaped
    assert "r&lt;1&gt;" in text and "best val bpb" in text
    assert "model:" in text                                      # the run's config.yaml


def test_no_report_without_a_readable_run(tmp_path):
    assert report_download(tmp_path, "missing") is None
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "status.json").write_text("{}")
    (tmp_path / "broken" / "metrics.db").write_bytes(b"not a database" * 100)
    assert report_download(tmp_path, "broken") is None
