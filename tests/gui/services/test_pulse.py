"""The page pulse (gui/services/pulse.py): its signature stays put while nothing a page shows
changes, and moves with each thing that does."""
import os
import time

from gui.services import pulse as P

NOW = 1_000_000.0


def make_run(folder):
    (folder / "checkpoints").mkdir(parents=True)
    (folder / "metrics.db").write_bytes(b"x" * 100)
    (folder / "metrics.db-wal").write_bytes(b"")
    (folder / "status.json").write_text("{}")
    return folder


def sig(run, data, **kw):
    kw.setdefault("now", NOW)
    return P.signature(kw.pop("version", 1), run, data, **kw)


def bump(path, data: bytes = b"more"):
    """Append, and move the mtime forward (a filesystem's mtime may be coarser than the test)."""
    with open(path, "ab") as fh:
        fh.write(data)
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))


def test_unchanged_folders_give_the_same_signature(tmp_path):
    run, data = make_run(tmp_path / "r"), tmp_path / "data"
    data.mkdir()
    first = sig(run, data)
    assert sig(run, data) == first and len(first) == 16
    # readers write SQLite's -shm index: the page's own reads are not news
    (run / "metrics.db-shm").write_bytes(b"\0" * 64)
    assert sig(run, data) == first


def test_each_change_a_page_shows_moves_the_signature(tmp_path):
    run, data = make_run(tmp_path / "r"), tmp_path / "data"
    data.mkdir()
    seen = {sig(run, data)}

    def moved(**kw):
        s = sig(run, data, **kw)
        assert s not in seen
        seen.add(s)

    bump(run / "metrics.db-wal")                              # a training step was logged
    moved()
    (run / "checkpoints" / "step000100.pt").write_bytes(b"c")  # a checkpoint appears
    st = (run / "checkpoints").stat()
    os.utime(run / "checkpoints", ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    moved()
    (data / "corpus").mkdir()                                  # a dataset built from the shell
    moved()
    moved(version=2)                                           # a run elsewhere moved on
    moved(pending=["new-run"])                                 # a run started here, no status yet
    moved(now=NOW + P.SAFETY_S)                                # the safety refresh


def test_a_running_job_makes_every_tick_new_and_missing_folders_are_empty(tmp_path):
    class Jobs:
        def __init__(self, running):
            self.running = running

        def any_running(self):
            return self.running

    class Builder:
        def building(self):
            return {"corpus"}

    assert P.any_busy(Jobs(True)) and P.any_busy(None, Builder())
    assert not P.any_busy(Jobs(False), None) and not P.any_busy()
    a = P.signature(1, None, None, busy=True)
    time.sleep(0.001)
    assert P.signature(1, None, None, busy=True) != a
    assert P.folder_entries(tmp_path / "gone") == [] and P.folder_entries(None) == []
