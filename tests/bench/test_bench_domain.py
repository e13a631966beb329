"""bench_domain's split: whole files, training text first, a test text of other files."""
import gzip

from bench.bench_domain import split_domain


def test_split_takes_whole_files_and_keeps_the_test_text_out_of_training(tmp_path):
    files = []
    for i in range(12):
        p = tmp_path / f"f{i:02d}.txt"
        p.write_bytes(f"file {i:02d} ".encode() * 50)              # 400 bytes, unique per file
        files.append(p)
    gz = tmp_path / "g.txt.gz"
    gz.write_bytes(gzip.compress(b"zipped text " * 40))
    binary = tmp_path / "b.bin"
    binary.write_bytes(b"\0\1\2" * 100)
    train, test, used = split_domain(files + [gz, binary], 1000, 900)
    assert len(train) == 1000 and len(test) == 900
    assert b"\0" not in train + test                               # binaries are skipped
    first_test = test[:8]
    assert first_test not in train                                 # another file starts the test
    again = split_domain(files + [gz, binary], 1000, 900)
    assert again == (train, test, used)                            # seeded: the same every run
    assert 4 <= used <= 8


def test_split_with_too_little_text_gives_a_short_test(tmp_path):
    p = tmp_path / "only.txt"
    p.write_bytes(b"x" * 300)
    train, test, used = split_domain([p], 1000, 500)
    assert (len(train), len(test), used) == (300, 0, 1)
