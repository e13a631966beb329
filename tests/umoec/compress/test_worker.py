"""The headless compression worker (umoec/compress/worker.py): its JSON-lines protocol, on its own.
The cockpit's jobs that drive it are tested in tests/gui/services/test_compress_jobs.py."""
import json
import subprocess
import sys
from pathlib import Path

from umoec.codec.errors import CodecError
from umoec.compress import evaluate as E
from umoec.compress import worker as W
from umoec.errors import EXIT_USAGE

ROOT = Path(__file__).resolve().parents[3]


def test_the_worker_imports_no_front_end():
    code = ("import sys, umoec.compress.worker\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'gui'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert out.stdout.strip() == "[]", out.stderr


def test_verify_of_a_missing_file_is_a_result_line(tmp_path):
    out = subprocess.run([sys.executable, "-m", "umoec.compress.worker", "verify",
                          "--umc", str(tmp_path / "missing.umc")],
                         capture_output=True, text=True, timeout=120, cwd=ROOT)
    lines = [json.loads(line) for line in out.stdout.splitlines()]
    assert out.returncode == 0, out.stderr
    assert lines[-1]["event"] == "result" and lines[-1]["ok"] is False
    assert "missing.umc" in lines[-1]["reason"]


def test_eval_looks_for_data_under_the_repository(tmp_path, monkeypatch, capsys):
    """data/enwik8 and a run's relative data.path are found from the repository root."""
    seen = []

    def find_data(data, run, root):
        seen.append(root)
        raise CodecError("no data here")
    monkeypatch.setattr(E, "find_data", find_data)
    monkeypatch.setattr(W, "_prepare_threads", lambda *a, **k: None)
    monkeypatch.setattr(W.signal, "signal", lambda *a: None)
    assert W.main(["eval", "--run", str(tmp_path)]) == EXIT_USAGE
    assert seen == [ROOT]
    last = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert last == {"event": "error", "message": "no data here"}
