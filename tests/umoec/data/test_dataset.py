"""Batches are pure functions of (seed, step), shard across ranks, respect documents; DatasetInfo
says what a folder holds, or what is wrong with it, and the trainer refuses the same folders."""
import json

import numpy as np
import pytest

from umoec.data import IGNORE, ByteDataset, DataError, DatasetInfo, document_features, prepare
from umoec.data.dataset import NOT_A_DATASET


@pytest.fixture(scope="module")
def ds(tmp_path_factory):
    root = tmp_path_factory.mktemp("ds")
    src = root / "src"
    src.mkdir()
    for i in range(30):
        (src / f"doc{i:02d}.txt").write_bytes(bytes([97 + i % 26]) * (50 + 17 * i))
    prepare(root / "data", [src], val_fraction=0.2)
    return ByteDataset(root / "data", d_globals=8)


def test_batch_is_a_pure_function_of_seed_and_step(ds):
    a = ds.batch(5, 4, 16, seed=1, pack=True)
    b = ds.batch(5, 4, 16, seed=1, pack=True)
    c = ds.batch(6, 4, 16, seed=1, pack=True)
    assert all(np.array_equal(p, q) for p, q in zip(a, b, strict=True))
    assert not np.array_equal(a[0], c[0])


def test_targets_are_next_bytes(ds):
    x, y, g = ds.batch(1, 3, 20, seed=0, pack=True)
    assert x.shape == y.shape == (3, 20) and g.shape == (3, 8) and g.dtype == np.float32
    assert np.array_equal(x[:, 1:], y[:, :-1])


def test_ranks_take_disjoint_rows_of_one_global_batch(ds):
    whole = ds.batch(3, 4, 16, seed=2, pack=True)[0]
    r0 = ds.batch(3, 2, 16, seed=2, pack=True, rank=0, world=2)[0]
    r1 = ds.batch(3, 2, 16, seed=2, pack=True, rank=1, world=2)[0]
    assert np.array_equal(np.concatenate([r0, r1]), whole)


def test_unpacked_rows_start_at_documents_and_pad(ds):
    x, y, _ = ds.batch(9, 8, 256, seed=3, pack=False)
    for row_x, row_y in zip(x, y, strict=True):
        n = int((row_y != IGNORE).sum())
        assert 0 < n <= 256
        assert len(set(row_x[:n].tolist())) == 1  # one document = one repeated letter
        assert (row_y[n:] == IGNORE).all()


def test_validation_batches_are_fixed_windows(ds):
    batches = list(ds.val_batches(batch_size=2, seq_len=16, max_bytes=80))
    assert sum(len(b[0]) for b in batches) == 5
    again = list(ds.val_batches(batch_size=2, seq_len=16, max_bytes=80))
    assert all(np.array_equal(p[0], q[0]) for p, q in zip(batches, again, strict=True))


def test_missing_dataset_says_how_to_build_it(tmp_path):
    with pytest.raises(DataError, match=r"bin.prepare_data --out"):
        ByteDataset(tmp_path / "nope", 4)


def test_damaged_dataset_is_reported(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    for i in range(3):
        (src / f"{i}.txt").write_text("abc" * 100)
    prepare(tmp_path / "d", [src])
    (tmp_path / "d" / "train.bin").write_bytes(b"short")
    with pytest.raises(DataError, match="damaged"):
        ByteDataset(tmp_path / "d", 4)


def built(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    for i in range(3):
        (src / f"{i}.txt").write_text(f"doc {i} " + "abc" * 100)
    prepare(tmp_path / "d", [src])
    return tmp_path / "d"


def test_info_of_a_whole_dataset_is_what_dataset_json_and_the_trainer_say(tmp_path):
    folder = built(tmp_path)
    info = DatasetInfo.read(folder)
    meta = json.loads((folder / "dataset.json").read_text())
    assert info.ok and info.recorded and info.name == "d" and info.files == 3
    assert (info.train_bytes, info.val_bytes) == (meta["splits"]["train"]["bytes"],
                                                  meta["splits"]["val"]["bytes"])
    assert info.train_docs + info.val_docs == 3 and info.created == meta["created"]
    ds = ByteDataset(folder, 4)
    assert (ds.size("train"), ds.size("val")) == (info.train_bytes, info.val_bytes)


@pytest.mark.parametrize("damage, problem, recorded", [
    (lambda d: (d / "dataset.json").unlink(), NOT_A_DATASET, False),
    (lambda d: (d / "dataset.json").write_text("{not json"), "damaged: dataset.json is unreadable (",
     False),
    (lambda d: (d / "dataset.json").write_text('{"splits": {}}'),
     "damaged: dataset.json is unreadable ('train')", False),
    (lambda d: (d / "val_docs.npy").unlink(), "damaged: val_docs.npy missing", True),
    (lambda d: (d / "train.bin").write_bytes(b"short"),
     "damaged: train.bin has 5 bytes, dataset.json says ", True),
])
def test_a_damaged_folder_says_what_is_wrong_and_the_trainer_refuses_it(tmp_path, damage, problem,
                                                                        recorded):
    folder = built(tmp_path)
    damage(folder)
    info = DatasetInfo.read(folder)
    assert not info.ok and info.problem.startswith(problem) and info.recorded is recorded
    expected = "dataset.json missing" if problem == NOT_A_DATASET else "is damaged"
    with pytest.raises(DataError, match=expected):
        ByteDataset(folder, 4)


def test_document_features_are_deterministic_and_sized():
    f = document_features(b"Hello, world!\n" * 10, 32)
    assert f.shape == (32,) and f.dtype == np.float32 and (f[27:] == 0).all()
    assert np.array_equal(f, document_features(bytearray(b"Hello, world!\n" * 10), 32))
    assert document_features(b"", 4).tolist() == [0, 0, 0, 0]
    assert document_features(bytes(range(256)), 2)[1] == pytest.approx(1.0)  # 8 bits / 8
