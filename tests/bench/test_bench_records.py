"""The records bench runs end to end on a few bytes (numbers are not checked): its generated
tables are what they say, every column is there, and 12-byte records take version 16."""
import io

import numpy as np

from bench import bench_records as B


def test_the_generated_tables_and_every_column():
    table = np.load(io.BytesIO(B.float_table()))
    assert table.dtype == np.float64 and table.shape == (20 * 21 * 7, 5)
    assert B.doc_database().startswith(b"SQLite format 3\0")
    r = B.row(B.binary_records(3000), [])
    assert {"cm v10", "cm v15", "xz -9e", "cm s"} <= set(r)
    assert any(k.startswith("umc cm (v16/") for k in r), r
    assert all(v > 0 for v in r.values())
