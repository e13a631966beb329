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


def test_stdin_to_stdout_pipeline(umc):
    umc.write("f", TEXT)
    cmd = " ".join(COMMAND)
    res = subprocess.run(f"cat f | {cmd} -c - | {cmd} -d -c - > g", shell=True, cwd=umc.cwd,
                         env=umc.env, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert (umc.cwd / "g").read_bytes() == TEXT
    assert sorted(p.name for p in umc.cwd.iterdir()) == ["f", "g"]


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
