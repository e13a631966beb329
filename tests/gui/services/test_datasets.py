"""The Datasets tab's model (gui/services/datasets.py) and callback bodies, without a browser: listing
whole and damaged folders, names that stay inside the datasets folder, previews, which run uses
which dataset, and real bin.prepare_data builds (success and an honest failure)."""
import json
from pathlib import Path

import numpy as np
import pytest

from gui.pages.datasets import callbacks as cb
from gui.services import datasets as D
from tests.conftest import ROOT
from umoec import config as C
from umoec.data import prepare
from umoec.run.atomic import atomic_write_text


def corpus(folder: Path, n: int = 6) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        (folder / f"doc{i}.txt").write_text(f"document {i}\n" + "hello world, " * (40 + i))
    return folder


@pytest.fixture
def good(tmp_path) -> Path:
    out = tmp_path / "data" / "good"
    prepare(out, [corpus(tmp_path / "src")], val_fraction=0.2)
    return out


def test_lists_a_whole_dataset_with_its_numbers(good):
    [info] = D.list_datasets(good.parent)
    meta = json.loads((good / "dataset.json").read_text())
    assert info.ok and info.name == "good" and info.files == 6 and info.kind == "files"
    assert info.train_bytes == meta["splits"]["train"]["bytes"] == (good / "train.bin").stat().st_size
    assert info.val_bytes == meta["splits"]["val"]["bytes"] > 0
    assert info.total_bytes == info.train_bytes + info.val_bytes
    assert info.train_docs + info.val_docs == 6 and info.created == meta["created"]


@pytest.mark.parametrize("damage, expected", [
    (lambda d: (d / "dataset.json").write_text("{not json"), "dataset.json is unreadable"),
    (lambda d: (d / "dataset.json").write_text('{"splits": {}}'), "dataset.json is unreadable"),
    (lambda d: (d / "val.bin").write_bytes(b"short"), "val.bin has 5 bytes, dataset.json says"),
    (lambda d: (d / "train_docs.npy").unlink(), "train_docs.npy missing"),
    (lambda d: (d / "dataset.json").unlink(), "not a dataset: no dataset.json"),
])
def test_damaged_folders_are_listed_with_the_reason(good, damage, expected):
    damage(good)
    [info] = D.list_datasets(good.parent)
    assert not info.ok and expected in info.problem


def test_interrupted_build_and_odd_entries(tmp_path, good):
    data = good.parent
    failed = data / "failed"
    failed.mkdir()
    (failed / D.BUILD_LOG).write_text("# cockpit: ...\nprepare_data: source /x does not exist\n")
    (data / ".hidden").mkdir()
    (data / "notes.txt").write_text("a file, not a dataset")
    infos = {d.name: d for d in D.list_datasets(data)}
    assert sorted(infos) == ["failed", "good"]
    assert "incomplete" in infos["failed"].problem and "/x does not exist" in infos["failed"].problem
    assert D.list_datasets(tmp_path / "missing") == []
    assert D.list_datasets(data / "notes.txt") == []


def test_resolve_never_leaves_the_datasets_folder(good):
    data = good.parent
    assert D.resolve_dataset(data, "good") == good
    for bad in ("..", ".", "../good", "good/../..", "", None, ".hidden", "/etc"):
        assert D.resolve_dataset(data, bad) is None


def test_escape_keeps_text_and_escapes_the_rest():
    raw = "caf\u00e9 ok\n\ttab\x1b[0m\x00".encode() + b"\xff\xfe" + "\u200b".encode()
    text = D.escape_text(raw)
    assert text.startswith("caf\u00e9 ok\n\ttab")
    assert "\\x1b[0m" in text and "\\x00" in text and "\\xff\\xfe" in text and "\\u200b" in text
    assert "\x1b" not in text and "\x00" not in text


def test_preview_reads_the_start_of_val_bin(good):
    which, text = D.preview_sample(good, 64)
    val = (good / "val.bin").read_bytes()
    assert which == "val.bin" and text == D.escape_text(val[:64])
    rows, total = D.file_list(good)
    assert total == 6 and {r["split"] for r in rows} == {"train", "val"}
    assert D.preview_sample(good.parent / "nothing") == ("", "")


def test_config_path_is_relative_inside_the_repository(tmp_path):
    assert D.config_path_value(ROOT / "data" / "x") == "data/x"
    assert D.config_path_value(tmp_path / "y") == str((tmp_path / "y").resolve())


def test_which_run_uses_which_dataset(tmp_path, good):
    runs = tmp_path / "runs"
    for name, path in (("a", str(good)), ("b", "data/elsewhere")):
        (runs / name).mkdir(parents=True)
        cfg = C.apply_overrides(C.to_dict(C.Config()), [f"data.path={path}"])
        atomic_write_text(runs / name / "config.yaml", C.dumps(C.build(cfg, "test")))
    (runs / "broken").mkdir()
    (runs / "broken" / "config.yaml").write_text(": not yaml : [")
    found = {name: (text, folder) for name, text, folder in D.run_datasets(runs)}
    assert found["a"] == (str(good), good.resolve())
    assert found["b"] == ("data/elsewhere", (ROOT / "data/elsewhere").resolve())
    assert found["broken"] == ("", None)
    usage = D.usage_by_dataset(D.list_datasets(good.parent), D.run_datasets(runs))
    assert usage == {"good": ["a"]}
    view = cb.list_view(good.parent, runs, set())
    assert [o["value"] for o in view["options"]] == ["good"] and view["default"] == "good"


def test_use_in_config_editor_injects_data_path(good):
    inject, _msg = cb.use_dataset(good.parent, "good")
    assert inject["values"] == {"data.path": str(good.resolve())}
    assert "Datasets" in inject["source"]
    (good / "val.bin").write_bytes(b"x")  # damaged: refused
    inject, msg = cb.use_dataset(good.parent, "good")
    assert inject is cb.no_update and "complete dataset" in str(msg)


# -- building ---------------------------------------------------------------------------------------
def wait_done(job, timeout=120.0):
    assert job.done.wait(timeout), job.tail()


def test_builder_refuses_bad_inputs_before_starting(tmp_path):
    b = D.DatasetBuilder(tmp_path / "data")
    with pytest.raises(D.BuildError, match="give the dataset a name"):
        b.start("../..", "")
    with pytest.raises(D.BuildError, match="source does not exist"):
        b.start("x", str(tmp_path / "nope"))
    with pytest.raises(D.BuildError, match=r"between 0 and 0.5"):
        b.start("x", "", val_fraction=0.7)
    with pytest.raises(D.BuildError, match="at least 1,024"):
        b.start("x", "", max_bytes=10)
    assert not (tmp_path / "data" / "x").exists()


def test_builder_runs_prepare_data_into_a_sanitised_folder(tmp_path):
    src = corpus(tmp_path / "src")
    b = D.DatasetBuilder(tmp_path / "data")
    job = b.start("../my corpus!", f"{src}\n\n# a comment\n", val_fraction=0.2, max_bytes=100_000)
    assert job.out == tmp_path / "data" / "my-corpus" and job.name == "my-corpus"
    assert "--source" in job.argv and str(src) in job.argv  # an argument list, no shell
    assert "my-corpus" in b.building() or not job.alive
    wait_done(job)
    level, text = job.outcome()
    assert job.exit_code == 0 and level == "ok" and "train" in text, job.tail()
    assert "bin.prepare_data" in job.tail()
    [info] = D.list_datasets(tmp_path / "data")
    assert info.ok and info.name == "my-corpus" and info.files == 6
    with pytest.raises(D.BuildError, match="already exists"):
        b.start("my-corpus", str(src))
    poll = cb.poll_build(b, "my-corpus")
    assert poll["poll_disabled"] and poll["version"]["name"] == "my-corpus"


def test_a_failing_build_says_why(tmp_path):
    src = tmp_path / "one"
    src.mkdir()
    (src / "only.txt").write_text("x")  # one byte cannot make train + val ranges
    b = D.DatasetBuilder(tmp_path / "data")
    job = b.start("single", str(src))
    wait_done(job)
    level, text = job.outcome()
    assert level == "failed" and job.exit_code == 2 and "too few to split" in text
    [info] = D.list_datasets(tmp_path / "data")
    assert not info.ok and "incomplete" in info.problem


def test_cancel_stops_the_build(tmp_path):
    b = D.DatasetBuilder(tmp_path / "data", python=str(fake_python(tmp_path)))
    job = b.start("slow", "")
    assert "Cancelling" in b.cancel("slow")
    wait_done(job)
    level, text = job.outcome()
    assert level == "failed" and text.startswith("Cancelled") and job.exit_code < 0
    assert b.cancel("slow") == "Nothing is being built."


def fake_python(tmp_path: Path) -> Path:
    """Stands in for python: prints a line and sleeps until signalled."""
    path = tmp_path / "fake-python"
    path.write_text("#!/bin/sh\necho started\nexec sleep 60\n")
    path.chmod(0o755)
    return path


def test_dataset_json_numbers_are_what_the_trainer_reads(good):
    # the tab's numbers and umoec.data.ByteDataset agree on the same folder
    from umoec.data import ByteDataset
    ds = ByteDataset(good, d_globals=8)
    [info] = D.list_datasets(good.parent)
    assert (ds.size("train"), ds.size("val")) == (info.train_bytes, info.val_bytes)
    assert np.load(good / "val_docs.npy").shape[0] == info.val_docs


def test_a_single_file_dataset_shows_its_byte_ranges(tmp_path):
    """One file, split by byte ranges: listed as one file, each range labelled in the file list."""
    from umoec.data import prepare
    f = tmp_path / "corpus.txt"
    f.write_bytes(b"the quick brown fox\n" * 5000)
    prepare(tmp_path / "data" / "one", [f], val_fraction=0.1)
    [info] = D.list_datasets(tmp_path / "data")
    assert info.ok and info.files == 1 and info.kind.startswith("one file: first 90,000 bytes")
    rows, total = D.file_list(info.path)
    assert total == 2 and [r["split"] for r in rows] == ["train (bytes 0..90,000)",
                                                         "val (bytes 90,000..100,000)"]


def test_a_source_line_may_carry_its_weight(tmp_path):
    a, b = corpus(tmp_path / "a"), corpus(tmp_path / "b b")       # a space in a path is a path
    paths, weights = D.parse_weighted_sources(f"{a} @3\n{b}\n", tmp_path)
    assert paths == [a, b] and weights == [3.0, 1.0]
    assert D.parse_weighted_sources(f"{a}\n{b}", tmp_path) == ([a, b], None)
    argv = D.build_command(tmp_path / "out", paths, 0.2, 100_000, "py", weights)
    assert argv[3:9] == ["--source", str(a), "--weight", "3", "--source", str(b)]
    assert argv[9:11] == ["--weight", "1"]
    with pytest.raises(D.BuildError, match="does not exist"):
        D.parse_weighted_sources(f"{tmp_path / 'nope'} @2", tmp_path)
