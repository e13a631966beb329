"""The Evaluation tab's data line names the bytes the evaluation worker will read: the choice is
umoec.compress.evaluate.locate_data's, so the tab and the worker cannot disagree."""
from gui.pages.evaluation.callbacks import data_source_note
from umoec import config as C
from umoec.compress.evaluate import locate_data
from umoec.run import RunDir
from umoec.run.atomic import atomic_write_text


def test_the_note_follows_the_workers_choice(tmp_path, monkeypatch):
    monkeypatch.delenv("ENWIK8", raising=False)
    root = tmp_path
    run = RunDir(tmp_path / "runs" / "r")
    assert data_source_note(run, root).startswith(
        "Data: enwik8 not found, and the run's config cannot be read (")
    run.root.mkdir(parents=True)
    atomic_write_text(run.config_path, C.dumps(C.load_preset("tier1_micro",
                                                             ["data.path=data/small"])))
    val = root / "data" / "small" / "val.bin"
    assert data_source_note(run, root) == (
        f"Data: neither enwik8 (data/enwik8, $ENWIK8) nor the run's validation split ({val}) "
        "exists: the evaluation will fail until one does.")
    val.parent.mkdir(parents=True)
    val.write_bytes(b"v")
    assert data_source_note(run, root) == (
        f"Data: enwik8 not found (data/enwik8 or $ENWIK8), so the run's validation split {val}. "
        "For enwik8, unzip https://mattmahoney.net/dc/enwik8.zip into data/.")
    enwik8 = tmp_path / "enwik8"
    enwik8.write_bytes(b"e")
    monkeypatch.setenv("ENWIK8", str(enwik8))
    assert data_source_note(run, root) == f"Data: enwik8 ({enwik8})."
    assert locate_data(run, root).path == enwik8
