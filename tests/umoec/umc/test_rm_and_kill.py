"""--rm deletes the source only after the written output decodes back to it; a failure, an
interrupt or a kill never costs the source and never leaves a partial output."""
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.umoec.umc.conftest import TEXT


def test_rm_removes_the_source_after_verifying_and_d_rm_restores_it(umc):
    umc.write("a.txt", TEXT)
    r = umc("--rm", "a.txt")
    assert r.rc == 0 and "verified, source removed" in r.err, r.err
    assert sorted(p.name for p in umc.cwd.iterdir()) == ["a.txt.umc"]
    r = umc("-d", "--rm", "a.txt.umc")
    assert r.rc == 0, r.err
    assert sorted(p.name for p in umc.cwd.iterdir()) == ["a.txt"]
    assert (umc.cwd / "a.txt").read_bytes() == TEXT


def test_k_wins_over_an_earlier_rm_and_rm_is_ignored_for_stdout(umc):
    umc.write("a.txt", TEXT[:300])
    assert umc("-q", "--rm", "-k", "a.txt").rc == 0
    assert (umc.cwd / "a.txt").exists() and (umc.cwd / "a.txt.umc").exists()
    r = umc("--rm", "-c", "a.txt")
    assert r.rc == 0 and "--rm ignored" in r.err
    assert (umc.cwd / "a.txt").read_bytes() == TEXT[:300]


def test_rm_keeps_the_source_when_the_output_cannot_be_written(umc):
    umc.write("a.txt", TEXT[:300])
    umc.write("afile", b"")
    r = umc("--rm", "-o", "afile/a.umc", "a.txt")              # the output's folder is a file
    assert r.rc == 1 and r.lines == ["umc: a.txt: cannot write afile/a.umc: afile is not a folder"]
    r = umc("--rm", "-o", "nodir/a.umc", "a.txt")
    assert r.rc == 1 and "nodir does not exist" in r.err
    umc.write("a.txt.umc", b"old")
    assert umc("--rm", "a.txt").rc == 1                          # refused overwrite
    assert (umc.cwd / "a.txt").read_bytes() == TEXT[:300]
    assert (umc.cwd / "a.txt.umc").read_bytes() == b"old"


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc (files cannot be made there)")
def test_rm_keeps_the_source_when_writing_fails_after_compressing(umc):
    umc.write("a.txt", TEXT[:300])
    r = umc("--rm", "-o", "/proc/umc-test.umc", "a.txt")      # passes the checks, fails to write
    assert r.rc == 1 and r.lines[-1].startswith("umc: a.txt: cannot write /proc/umc-test.umc: ")
    assert (umc.cwd / "a.txt").read_bytes() == TEXT[:300]


def _default_sigint() -> None:
    """A suite started in the background by a non-interactive shell inherits SIGINT ignored,
    and Python then installs no KeyboardInterrupt handler: give umc the terminal's default."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _started(umc, *args) -> subprocess.Popen:
    """umc -v ARGS, returned once it says it is compressing (so the signal hits the coding)."""
    proc = umc.popen("-v", *args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                     stderr=subprocess.PIPE, preexec_fn=_default_sigint)
    seen = b""
    while b"compressing with model" not in seen:
        line = proc.stderr.readline()
        assert line, f"umc ended before compressing: {seen!r}"
        seen += line
    time.sleep(0.3)
    assert proc.poll() is None, "the input is too small to be still compressing"
    return proc


def _big() -> bytes:
    text = b"".join(p.read_bytes() for p in sorted((ROOT / "umoec" / "codec").glob("*.py")))
    return (text * 2)[:64 * 1024]


def test_a_kill_during_compression_leaves_the_source_and_no_output(umc):
    big = _big()
    umc.write("big.txt", big)
    proc = _started(umc, "--rm", "big.txt")
    proc.kill()
    proc.wait(timeout=30)
    assert sorted(p.name for p in umc.cwd.iterdir()) == ["big.txt"]
    assert (umc.cwd / "big.txt").read_bytes() == big


def test_ctrl_c_exits_130_and_leaves_nothing_behind(umc):
    umc.write("big.txt", _big())
    proc = _started(umc, "--rm", "big.txt")
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and b"umc: interrupted" in err
    assert sorted(p.name for p in umc.cwd.iterdir()) == ["big.txt"]
