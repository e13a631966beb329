"""Atomic writes: the target appears complete or not at all; a long (unnamed) write has no name
in the folder until it is complete, so a kill during it leaves nothing."""
import os
import subprocess
import sys

import pytest

from umoec.run.atomic import atomic_write, atomic_write_bytes


def test_short_writes_replace_the_target_whole(tmp_path):
    target = tmp_path / "f"
    atomic_write_bytes(target, b"one")
    atomic_write_bytes(target, b"two")
    assert target.read_bytes() == b"two" and os.listdir(tmp_path) == ["f"]


def test_an_unnamed_write_is_invisible_until_done_and_a_failure_leaves_nothing(tmp_path):
    seen = []

    def write(fh):
        fh.write(b"x" * 1000)
        seen.append(sorted(os.listdir(tmp_path)))

    atomic_write(tmp_path / "out", write, unnamed=True)
    assert (tmp_path / "out").read_bytes() == b"x" * 1000
    assert seen == [[]] or sys.platform != "linux"
    def failing(fh):
        fh.write(b"y")
        raise RuntimeError("stop")

    with pytest.raises(RuntimeError):
        atomic_write(tmp_path / "other", failing, unnamed=True)
    assert os.listdir(tmp_path) == ["out"]


def test_a_kill_during_an_unnamed_write_leaves_nothing(tmp_path):
    code = ("import sys, time; from umoec.run.atomic import atomic_write\n"
            "def w(fh):\n    fh.write(b'z' * 4096); fh.flush(); print('writing', flush=True); "
            "time.sleep(60)\n"
            f"atomic_write({str(tmp_path / 'out')!r}, w, unnamed=True)\n")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "writing"
    proc.kill()
    proc.wait(timeout=30)
    proc.stdout.close()
    if sys.platform == "linux":
        assert os.listdir(tmp_path) == []
