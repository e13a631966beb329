"""`umc FILE...` and `umc -d`: round trips, many files, stdin/stdout, -o, -f, exit codes."""
import os
import subprocess

from tests.umoec.umc.conftest import BINARY, COMMAND, TEXT

MAGIC = b"\x89UMC"


def test_text_binary_and_empty_files_round_trip_and_sources_are_kept(umc):
    files = {"a.txt": TEXT, "b.bin": BINARY, "empty": b""}
    for name, data in files.items():
        umc.write(name, data)
    os.utime(umc.cwd / "a.txt", (1_000_000_000, 1_000_000_000))
    r = umc("a.txt", "b.bin", "empty")
    assert r.rc == 0, r.err
    assert len(r.lines) == 3 and all(" -> " in ln and "bpb" in ln for ln in r.lines)
    for name, data in files.items():
        assert (umc.cwd / name).read_bytes() == data           # kept (the default, like -k)
        assert (umc.cwd / f"{name}.umc").read_bytes()[:4] == MAGIC
        (umc.cwd / name).rename(umc.cwd / f"{name}.orig")
    assert os.stat(umc.cwd / "a.txt.umc").st_mtime == 1_000_000_000   # zstd keeps the times
    r = umc("-d", "a.txt.umc", "b.bin.umc", "empty.umc")
    assert r.rc == 0, r.err
    for name, data in files.items():
        assert (umc.cwd / name).read_bytes() == data
        assert (umc.cwd / f"{name}.umc").exists()


def test_one_missing_file_fails_alone_and_the_others_are_done(umc):
    umc.write("a.txt", TEXT[:400])
    umc.write("b.bin", BINARY[:200])
    r = umc("a.txt", "missing.txt", "b.bin")
    assert r.rc == 1
    errors = [ln for ln in r.lines if ln.startswith("umc: ")]
    assert errors == ["umc: missing.txt: No such file or directory"]
    assert (umc.cwd / "a.txt.umc").exists() and (umc.cwd / "b.bin.umc").exists()
    assert not (umc.cwd / "missing.txt.umc").exists()


def _pipeline(umc, first: list[str], second: list[str], data: bytes) -> bytes:
    """data | umc FIRST | umc SECOND -> what the second writes (two processes, one pipe)."""
    a = umc.popen(*first, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    b = umc.popen(*second, stdin=a.stdout, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    a.stdout.close()                              # b owns the pipe's read end now
    a.stdin.write(data)
    a.stdin.close()
    out, err_b = b.communicate(timeout=120)
    err_a = a.stderr.read()
    assert a.wait(timeout=60) == 0 and b.returncode == 0, (err_a, err_b)
    a.stderr.close()
    return out


def test_stdin_to_stdout_pipeline(umc):
    assert _pipeline(umc, ["-c", "-"], ["-d", "-c", "-"], TEXT) == TEXT
    assert sorted(p.name for p in umc.cwd.iterdir()) == []


def test_frames_stream_through_a_pipe_and_workers_never_change_the_bytes(umc):
    """An input of several frames: the same file from one worker or two, from a file or stdin
    (no name), decoded by either, listed with its frame count; a frame cut off is refused."""
    data = (TEXT * 30)[:40_000]
    umc.write("big.txt", data)
    args = ["--profile", "cm", "--frame-size", "8K"]
    assert umc(*args, "-T", "1", "big.txt", "-o", "one.umc").rc == 0
    assert umc(*args, "-T", "2", "big.txt", "-o", "two.umc").rc == 0
    one = (umc.cwd / "one.umc").read_bytes()
    assert one == (umc.cwd / "two.umc").read_bytes() and one.count(MAGIC) == 5
    assert _pipeline(umc, args + ["-c"], ["-d", "-c", "-T", "2"], data) == data
    listed = umc("-l", "one.umc")
    assert listed.rc == 0 and "40,000" in listed.out.decode() and "5 frames" in listed.out.decode()
    cut = one[:one.rfind(MAGIC)]                   # the last frame is gone
    umc.write("cut.umc", cut)
    r = umc("-t", "cut.umc")
    assert r.rc == 1 and "truncated .umc file: it ends after frame 3" in r.err


def test_c_writes_stdout_and_no_file_means_stdin(umc):
    umc.write("a.txt", TEXT[:600])
    r = umc("-c", "a.txt")
    assert r.rc == 0 and r.out[:4] == MAGIC
    assert sorted(p.name for p in umc.cwd.iterdir()) == ["a.txt"]
    back = umc("-d", stdin=r.out)                 # no FILE: stdin -> stdout
    assert back.rc == 0 and back.out == TEXT[:600]


def test_refuses_to_overwrite_without_f(umc, packed):
    umc.write("a.txt", TEXT[:300])
    umc.write("a.txt.umc", b"old")
    r = umc("a.txt")
    assert r.rc == 1
    assert r.lines == ["umc: a.txt: a.txt.umc already exists; not overwritten (use -f to overwrite)"]
    assert (umc.cwd / "a.txt.umc").read_bytes() == b"old"
    assert umc("-q", "-f", "a.txt").rc == 0
    assert (umc.cwd / "a.txt.umc").read_bytes()[:4] == MAGIC
    # decompressing: the same refusal for an existing FILE
    umc.write("text.txt.umc", packed.read_bytes())
    umc.write("text.txt", b"mine")
    r = umc("-d", "text.txt.umc")
    assert r.rc == 1 and "text.txt already exists" in r.err
    assert (umc.cwd / "text.txt").read_bytes() == b"mine"


def test_o_names_the_output_and_d_needs_the_suffix_otherwise(umc):
    umc.write("a.txt", TEXT[:500])
    assert umc("-o", "packed.bin", "a.txt").rc == 0
    assert not (umc.cwd / "a.txt.umc").exists()
    r = umc("-d", "packed.bin")
    assert r.rc == 1 and "unknown suffix" in r.err and "-o" in r.err
    assert umc("-d", "-o", "back.txt", "packed.bin").rc == 0
    assert (umc.cwd / "back.txt").read_bytes() == TEXT[:500]
    r = umc("a.txt.umc")                            # not compressed twice by accident
    assert r.rc == 1 and "already has the .umc suffix" in r.err


def test_command_line_errors_exit_2_and_touch_nothing(umc):
    umc.write("a", b"x")
    umc.write("b", b"y")
    for args, says in [(("-o", "x", "a", "b"), "-o takes one input"),
                       (("-o", "x", "-c", "a"), "-o and -c"),
                       (("-c", "a", "b"), "-c with several inputs"),
                       (("-T", "-1", "a"), "-T/--threads"),
                       (("-l", "-"), "-l"),
                       (("--profile", "nosuch", "a"), "invalid choice")]:
        r = umc(*args)
        assert r.rc == 2 and says in r.err, (args, r.err)
    assert sorted(p.name for p in umc.cwd.iterdir()) == ["a", "b"]


def test_refuses_a_terminal_for_compressed_data(umc):
    import pty
    master, slave = pty.openpty()
    try:
        umc.write("a", b"x")
        res = subprocess.run(COMMAND + ["-c", "a"], cwd=umc.cwd, env=umc.env, stdout=slave,
                             stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, timeout=60)
        assert res.returncode == 2 and b"terminal" in res.stderr
        res = subprocess.run(COMMAND, cwd=umc.cwd, env=umc.env, stdin=slave,
                             capture_output=True, timeout=60)
        assert res.returncode == 2 and b"no input" in res.stderr
    finally:
        os.close(master)
        os.close(slave)
