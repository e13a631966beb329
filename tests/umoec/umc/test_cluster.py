"""umc --cluster: a file of several frames coded on a Dask cluster is the file umc writes alone,
and decodes there or here; a cluster that cannot be used stops umc before any file is touched
(exit 2, one line)."""
from tests.umoec.umc.conftest import TEXT


def test_frames_coded_on_a_cluster_are_the_bytes_written_alone(umc, dask_cluster):
    data = (TEXT * 30)[:24_000]
    umc.write("big.txt", data)
    for profile in ("-1", "--profile=cm"):       # a network profile (the model goes along), cm
        alone = umc(profile, "-f", "--frame-size", "8K", "big.txt", "-o", "alone.umc")
        r = umc(profile, "-f", "-v", "--frame-size", "8K", "--cluster", dask_cluster, "big.txt",
                "-o", "there.umc")
        assert alone.rc == 0 and r.rc == 0, r.err
        assert f"Dask cluster {dask_cluster}: 2 workers, 2 threads" in r.err
        there = (umc.cwd / "there.umc").read_bytes()
        assert there == (umc.cwd / "alone.umc").read_bytes() and there.count(b"\x89UMC") == 3
        d = umc("-d", "-f", "--cluster", dask_cluster, "there.umc", "-o", "back.txt")
        assert d.rc == 0 and (umc.cwd / "back.txt").read_bytes() == data
        assert umc("-t", "--cluster", dask_cluster, "alone.umc").rc == 0


def test_a_cluster_that_cannot_be_used_stops_umc_before_any_file(umc):
    umc.write("a.txt", TEXT)
    r = umc("--cluster", "tcp://127.0.0.1:9", "a.txt", timeout=60)
    assert r.rc == 2 and r.lines == [
        "umc: cannot reach the Dask scheduler at tcp://127.0.0.1:9: Timed out trying to connect "
        "to tcp://127.0.0.1:9 after 10 s"]
    assert not (umc.cwd / "a.txt.umc").exists()
    r = umc("--cluster", "ftp://x", "a.txt")
    assert r.rc == 2 and "is not a scheduler address" in r.err
    r = umc("-l", "--cluster", "tcp://127.0.0.1:9", "a.txt")
    assert r.rc == 2 and "-l only reads headers" in r.err
