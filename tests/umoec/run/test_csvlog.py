"""log.csv: what CsvLog writes, parse_log_csv / read_log_csv read back (the cockpit's reader of
our runs and of Forge's). The parser's edge cases (no header, 6 columns, malformed lines) are
tested on Forge-written text in tests/gui/services/test_forge.py."""
import pytest

from umoec.run import RunDir
from umoec.run.csvlog import CSV_COLUMNS, CsvLog, CsvLogError, parse_log_csv, read_log_csv


def write(path, rows):
    log = CsvLog(path)
    for step, loss, val, elapsed in rows:
        log.write(step, loss, 3e-4, 0.5, 1234.5, elapsed, val_loss=val)
    log.close()


def test_what_the_writer_writes_the_reader_reads(tmp_path):
    path = RunDir(tmp_path).csv_path
    rows = [(s, 5.0 - 0.25 * s, 4.5 - 0.25 * s if s % 3 == 2 else None, 0.5 * (s + 1))
            for s in range(7)]
    write(path, rows)
    assert path.read_text().splitlines()[0] == ",".join(CSV_COLUMNS)
    log = read_log_csv(path)
    assert log.columns == CSV_COLUMNS and log.skipped == 0 and log.resumes == 0
    assert log.train["step"].tolist() == [r[0] for r in rows]
    assert log.train["loss"].tolist() == pytest.approx([r[1] for r in rows])
    assert log.train["lr"].tolist() == pytest.approx([3e-4] * 7)
    assert log.train["tokens_per_sec"].tolist() == pytest.approx([1234.5] * 7)
    assert log.train["elapsed_s"].tolist() == pytest.approx([r[3] for r in rows])
    # val_loss=-1 (no evaluation) is no row of `val`
    assert log.val["step"].tolist() == [2, 5]
    assert log.val["val_loss"].tolist() == pytest.approx([4.0, 3.25])


def test_a_resumed_writer_appends_and_the_reader_resolves_the_resume(tmp_path):
    path = tmp_path / "log.csv"
    write(path, [(s, 5.0, None, float(s)) for s in range(6)])        # died after step 5
    write(path, [(s, 4.0, None, float(s - 3)) for s in range(3, 9)])  # resumed from step 3
    assert path.read_text().count("step,") == 1                       # one header
    log = parse_log_csv(path.read_bytes())
    assert log.train["step"].tolist() == list(range(9))
    assert log.train["loss"].tolist()[3:] == [4.0] * 6                # the resumed rows win
    assert log.resumes == 1 and log.superseded == 3
    assert log.train["elapsed_s"].is_monotonic_increasing


def test_unreadable_or_foreign_files_are_refused_with_a_reason(tmp_path):
    with pytest.raises(CsvLogError, match="cannot be read"):
        read_log_csv(tmp_path / "missing.csv")
    with pytest.raises(CsvLogError, match="lacks step"):
        parse_log_csv("time,value\n1,2\n")


def test_reading_a_log_is_what_loads_pandas():
    """The writer's users (trainer, simulator, metrics package) do not pay for pandas."""
    import subprocess
    import sys
    code = ("import sys, umoec.run.recorder, umoec.run.csvlog; "
            "print(sorted(m for m in ('numpy', 'pandas') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "[]", out.stderr
