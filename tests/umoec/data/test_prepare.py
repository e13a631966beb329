"""Dataset building: splits by whole file, records checksums, default corpus, enwik8 split."""
import hashlib
import json

import numpy as np
import pytest

from umoec.data import DataError, prepare
from umoec.data import corpus as prep_mod


def make_files(root, n=20, size=300):
    root.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        (root / f"f{i:02d}.txt").write_bytes(bytes([65 + i % 26]) * (size + i))
    return root


def test_files_split_whole_and_recorded(tmp_path):
    src = make_files(tmp_path / "src")
    rec = prepare(tmp_path / "ds", [src], val_fraction=0.2, seed=7)
    meta = json.loads((tmp_path / "ds" / "dataset.json").read_text())
    assert meta == json.loads(json.dumps(rec))
    splits = {f["path"]: f["split"] for f in rec["files"]}
    assert len(splits) == 20 and set(splits.values()) == {"train", "val"}
    train = (tmp_path / "ds" / "train.bin").read_bytes()
    val = (tmp_path / "ds" / "val.bin").read_bytes()
    assert len(train) + len(val) == sum(300 + i for i in range(20))
    assert hashlib.sha256(train).hexdigest() == rec["splits"]["train"]["sha256"]
    assert 0.1 < len(val) / (len(train) + len(val)) < 0.35
    docs = np.load(tmp_path / "ds" / "train_docs.npy")
    assert docs[0] == 0 and len(docs) == rec["splits"]["train"]["documents"]
    # boundaries: each document is one file's bytes, so a boundary changes the letter
    assert all(train[int(o) - 1] != train[int(o)] for o in docs[1:])


def test_split_is_deterministic_per_seed(tmp_path):
    src = make_files(tmp_path / "src")
    a = prepare(tmp_path / "a", [src], seed=1)["splits"]["val"]["sha256"]
    b = prepare(tmp_path / "b", [src], seed=1)["splits"]["val"]["sha256"]
    c = prepare(tmp_path / "c", [src], seed=2)["splits"]["val"]["sha256"]
    assert a == b and a != c


def test_default_corpus_is_the_standard_library(tmp_path):
    rec = prepare(tmp_path / "d", max_bytes=300_000)
    assert rec["kind"].startswith("default") and rec["splits"]["train"]["bytes"] > 100_000
    assert all(f["path"].endswith(".py") for f in rec["files"])


def test_errors_are_clear(tmp_path):
    with pytest.raises(DataError, match="does not exist"):
        prepare(tmp_path / "x", [tmp_path / "missing"])
    (tmp_path / "one").mkdir()
    (tmp_path / "one" / "a.txt").write_text("hello world")
    with pytest.raises(DataError, match="at least 2 files"):
        prepare(tmp_path / "x", [tmp_path / "one"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(DataError, match="no readable, non-empty files"):
        prepare(tmp_path / "x", [tmp_path / "empty"])


def test_enwik8_gets_its_standard_split(tmp_path, monkeypatch):
    monkeypatch.setattr(prep_mod, "ENWIK8_SIZE", 1000)
    monkeypatch.setattr(prep_mod, "ENWIK8_SPLIT", (900, 50))
    f = tmp_path / "enwik8"
    f.write_bytes(bytes(range(256)) * 3 + bytes(232))
    rec = prepare(tmp_path / "e", [f])
    assert rec["enwik8"] and rec["splits"]["train"]["bytes"] == 900
    assert (tmp_path / "e" / "val.bin").read_bytes() == f.read_bytes()[900:950]


def test_the_general_corpus_holds_files_out_and_reads_gzip(tmp_path):
    """The default model's corpus: every source within its share, gzip read through, and the
    held-out files (1 in 8 by path) in neither split."""
    import json
    from pathlib import Path

    from umoec.data import prepare
    from umoec.data.general import HOLD_OUT, held_out, sources
    rec = prepare(tmp_path / "g", max_bytes=400_000, corpus="general")
    assert rec["kind"].startswith("general") and str(HOLD_OUT) in rec["kind"]
    budgets = {s.name: s.budget * 400_000 / sum(x.budget for x in sources()) for s in sources()}
    for name, taken in rec["sources"].items():
        assert taken["bytes"] <= budgets[name] + 1
    paths = [Path(f["path"]) for f in rec["files"]]
    assert paths and not any(held_out(p) for p in paths)
    train = (tmp_path / "g" / "train.bin").read_bytes()
    assert b"\x1f\x8b\x08" not in train[:200_000]            # no raw gzip stream slipped in
    assert json.loads((tmp_path / "g" / "dataset.json").read_text())["splits"]["train"]["bytes"] \
        == len(train)
