"""Dataset building: splits by whole file, one file by byte ranges, records checksums, default
corpus, enwik8 split, bounded memory."""
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
    (tmp_path / "one" / "a.txt").write_text("hi")
    with pytest.raises(DataError, match=r"a.txt holds 2 bytes: too few to split"):
        prepare(tmp_path / "x", [tmp_path / "one"])
    (tmp_path / "z.txt").write_bytes(b"")
    with pytest.raises(DataError, match="no readable, non-empty files"):
        prepare(tmp_path / "x", [tmp_path / "z.txt"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(DataError, match="no readable, non-empty files"):
        prepare(tmp_path / "x", [tmp_path / "empty"])


def test_one_file_is_split_by_byte_ranges(tmp_path):
    """The most common corpus: one big text file. The last val_fraction of the bytes taken is
    validation; --max-bytes takes the file's beginning."""
    f = tmp_path / "corpus.txt"
    data = bytes(np.random.default_rng(0).integers(0, 256, 200_000, dtype=np.uint8))
    f.write_bytes(data)
    rec = prepare(tmp_path / "d", [f], val_fraction=0.1)
    train = (tmp_path / "d" / "train.bin").read_bytes()
    val = (tmp_path / "d" / "val.bin").read_bytes()
    assert train == data[:180_000] and val == data[180_000:]
    assert rec["kind"] == rec["split_rule"] == "one file: first 180,000 bytes train, next 20,000 bytes val"
    assert [(e["split"], e["range"]) for e in rec["files"]] == [("train", [0, 180_000]),
                                                               ("val", [180_000, 200_000])]
    assert rec["files"][1]["sha256"] == hashlib.sha256(val).hexdigest()
    capped = prepare(tmp_path / "c", [f], val_fraction=0.1, max_bytes=50_000)
    assert (tmp_path / "c" / "train.bin").read_bytes() == data[:45_000]
    assert (tmp_path / "c" / "val.bin").read_bytes() == data[45_000:50_000]
    assert "last 150,000 not taken" in capped["split_rule"]
    # a folder holding one file, or many files of which only one fits --max-bytes, alike
    (tmp_path / "dir").mkdir()
    (tmp_path / "dir" / "big.txt").write_bytes(data)
    (tmp_path / "dir" / "bigger.txt").write_bytes(data + data)
    one = prepare(tmp_path / "o", [tmp_path / "dir"], val_fraction=0.1, max_bytes=250_000)
    assert one["splits"]["val"]["bytes"] + one["splits"]["train"]["bytes"] <= 250_000
    assert one["skipped_files"] == 1 and len({e["path"] for e in one["files"]}) == 1


def test_a_large_sparse_file_streams_in_bounded_memory(tmp_path):
    """An enwik8-sized file that is not enwik8: split by ranges, read a piece at a time (the
    peak RSS of a fresh process stays far below the 100 MB it writes)."""
    import subprocess
    import sys
    f = tmp_path / "big.bin"
    with open(f, "wb") as fh:
        fh.truncate(100_000_000)
    # VmHWM, not ru_maxrss: the latter keeps the parent's peak across fork + exec
    code = ("import sys; from pathlib import Path; from umoec.data import prepare; "
            "prepare(Path(sys.argv[2]), [Path(sys.argv[1])], val_fraction=0.05, "
            "max_bytes=100_000_000); "
            "print([l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM')][0])")
    out = subprocess.run([sys.executable, "-c", code, str(f), str(tmp_path / "d")], check=True,
                         capture_output=True, text=True, timeout=300)
    peak_mib = int(out.stdout.split()[-1]) / 1024
    rec = json.loads((tmp_path / "d" / "dataset.json").read_text())
    assert rec["splits"]["train"]["bytes"] == 95_000_000
    assert rec["splits"]["val"]["sha256"] == hashlib.sha256(bytes(5_000_000)).hexdigest()
    assert peak_mib < 90, f"peak RSS {peak_mib:.0f} MiB"


def test_a_folder_loop_is_not_followed(tmp_path):
    src = make_files(tmp_path / "src", n=4)
    (src / "loop").symlink_to(src, target_is_directory=True)
    rec = prepare(tmp_path / "d", [src])
    assert len(rec["files"]) == 4


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


def test_weights_per_source_repeat_its_training_files_and_leave_validation_alone(tmp_path):
    a = make_files(tmp_path / "a", n=10, size=200)
    b = tmp_path / "b"
    b.mkdir()
    for i in range(10):
        (b / f"g{i}.txt").write_bytes(b"b" * (500 + i))
    plain = prepare(tmp_path / "plain", [a, b], val_fraction=0.2, seed=3)
    rec = prepare(tmp_path / "w", [a, b], val_fraction=0.2, seed=3, weights=[3, 0.5])
    assert rec["weights"] == [3.0, 0.5]
    assert (tmp_path / "w" / "val.bin").read_bytes() == (tmp_path / "plain" / "val.bin").read_bytes()
    train_plain = [f for f in plain["files"] if f["split"] == "train"]
    train = [f for f in rec["files"] if f["split"] == "train"]
    count = {p: sum(f["path"] == p for f in train) for p in {f["path"] for f in train_plain}}
    in_a = [n for p, n in count.items() if "/a/" in p]
    in_b = [n for p, n in count.items() if "/b/" in p]
    assert in_a and set(in_a) == {3}                        # every file of a three times
    assert set(in_b) <= {0, 1} and 0 < sum(in_b) < len(in_b)  # about half of b's, once
    size = (tmp_path / "w" / "train.bin").stat().st_size
    assert size == sum(f["bytes"] for f in train) == rec["splits"]["train"]["bytes"]
    again = prepare(tmp_path / "w2", [a, b], val_fraction=0.2, seed=3, weights=[3, 0.5])
    assert again["splits"] == rec["splits"]                 # the seed fixes which half


@pytest.mark.parametrize("weights, message", [
    ([1.0], "give one weight per source"), ([1.0, 0.0], "must be in"),
    ([1.0, 101.0], "must be in")])
def test_bad_weights_are_refused(tmp_path, weights, message):
    a, b = make_files(tmp_path / "a", n=3), make_files(tmp_path / "b", n=3)
    with pytest.raises(DataError, match=message):
        prepare(tmp_path / "ds", [a, b], weights=weights)
