"""Profiles, threads, messages, subcommand dispatch and the import-light entry point."""
import subprocess
import sys

import pytest
import tomllib

from tests.conftest import ROOT
from tests.umoec.umc.conftest import TEXT
from umoec.cli import UserError
from umoec.compress.profiles import PROFILES
from umoec.umc import names
from umoec.umc.main import DEFAULT_PROFILE, LEVELS, parser


def _profile(umc, name: str) -> str:
    from umoec.codec import read_header
    return read_header((umc.cwd / name).read_bytes()).profile


def test_levels_and_profile_choose_the_profile_default_auto(umc):
    assert DEFAULT_PROFILE == "auto" and LEVELS == {"-1": "turbo", "-2": "fast", "-3": "balanced"}
    for name in ("d", "p1", "p3", "pp", "last"):
        umc.write(name, TEXT[:200])
    umc.write("big", TEXT * 4)
    for args in (["d"], ["-1", "p1"], ["-3", "p3"], ["--profile", "turbo", "pp"],
                 ["-3", "--profile", "turbo", "-2", "last"], ["big"]):
        assert umc("-q", *args).rc == 0, args
    assert [_profile(umc, f"{n}.umc") for n in ("d", "p1", "p3", "pp", "last", "big")] == \
        ["cm", "turbo", "balanced", "turbo", "fast", "fast"]
    # auto: 200 bytes are coded smaller by cm (the network's header carries its global vector)
    r = umc("-v", "-c", "d")
    assert r.rc == 0 and "auto chose cm on the whole input: fast " in r.err
    assert len((umc.cwd / "d.umc").read_bytes()) < len((umc.cwd / "last.umc").read_bytes())
    (umc.cwd / "p3").unlink()
    r = umc("-d", "--profile", "turbo", "p3.umc")            # decoding takes it from the file
    assert r.rc == 0 and (umc.cwd / "p3").read_bytes() == TEXT[:200]


def test_threads_quiet_and_verbose(umc, default_model):
    umc.write("a", TEXT[:200])
    r = umc("-v", "-T", "2", "-o", "a2.umc", "a")
    assert r.rc == 0 and "2 threads" in r.err, r.err
    assert f"compressing with model {default_model.name} ({default_model.short}), profile auto" \
        in r.err
    r = umc("-T", "1", "a")                                   # normal: one summary line
    assert r.rc == 0 and len(r.lines) == 1 and r.lines[0].startswith("a -> a.umc: raw 200 B")
    assert (umc.cwd / "a.umc").read_bytes() == (umc.cwd / "a2.umc").read_bytes()  # thread-free
    r = umc("-q", "-d", "-o", "back", "a.umc")
    assert r.rc == 0 and r.err == ""
    r = umc("-q", "nosuch")                                   # -q keeps the errors
    assert r.rc == 1 and r.lines == ["umc: nosuch: No such file or directory"]


def test_version_help_and_debug(umc):
    r = umc("-V")
    assert r.rc == 0 and r.out.decode().startswith("umc ") and "coding engine v" in r.out.decode()
    r = umc("-h")
    assert r.rc == 0 and b"--rm" in r.out and b"exit status" in r.out
    r = umc("--debug", "--model", "nosuch", "x")
    assert r.rc == 2 and "Traceback" in r.err and "'nosuch'" in r.lines[-1]


def test_subcommand_names_are_files_when_such_a_file_exists(umc):
    r = umc("model", "list")
    assert r.rc == 0 and b"shipped" in r.out
    umc.write("model", TEXT[:100])
    r = umc("model")
    assert r.rc == 0 and "is a file here" in r.err
    assert (umc.cwd / "model.umc").exists()
    r = umc("--", "train")                                    # -- forces a file
    assert r.rc == 1 and r.lines[-1] == "umc: train: No such file or directory"


@pytest.mark.parametrize("sub, module", [("train", "bin.train"), ("eval", "bin.evaluate")])
def test_train_and_eval_forward_their_arguments(umc, sub, module):
    r = umc(sub, "--help")
    assert r.rc == 0 and f"python -m {module}" in r.out.decode()
    r = umc(sub, "--config", "c.yaml", "--out", "o", "--no-such-flag")  # all passed on
    assert r.rc == 2 and "unrecognized arguments:" in r.err, r.err
    assert r.err.rstrip().endswith(" --no-such-flag") and f"python -m {module}" in r.err


def test_gui_forwards_its_arguments(umc):
    r = umc("gui", "--help")
    assert r.rc == 0 and b"--runs-dir" in r.out


def test_importing_the_command_loads_no_numpy():
    code = ("import sys, umoec.umc.main; "
            "sys.exit(1 if 'numpy' in sys.modules or 'torch' in sys.modules else 0)")
    assert subprocess.run([sys.executable, "-c", code], cwd=ROOT).returncode == 0


def test_the_console_script_is_registered():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert meta["project"]["scripts"]["umc"] == "umoec.umc.main:entry"


def test_output_names_follow_zstd():
    t = names.target_for
    assert t("dir/a.txt", decompress=False, to_stdout=False, output=None) == "dir/a.txt.umc"
    assert t("dir/a.txt.umc", decompress=True, to_stdout=False, output=None) == "dir/a.txt"
    assert t("-", decompress=False, to_stdout=False, output=None) is None
    assert t("-", decompress=True, to_stdout=False, output="x") == "x"
    assert t("a.txt", decompress=False, to_stdout=True, output=None) is None
    assert t("a", decompress=True, to_stdout=False, output="b") == "b"
    for src, dec in (("a", True), (".umc", True), ("a.umc", False)):
        with pytest.raises(UserError) as exc:
            t(src, decompress=dec, to_stdout=False, output=None)
        assert exc.value.exit_code == 1


def test_every_flag_is_documented():
    from umoec.umc import models
    doc = (ROOT / "docs" / "umc.md").read_text()
    flags = {s for a in parser()._actions for s in a.option_strings}
    sub = models.parser()._subparsers._group_actions[0].choices
    for name, p in sub.items():
        assert f"umc model {name}" in doc, name
        flags |= {s for a in p._actions for s in a.option_strings}
    missing = sorted(f for f in flags if f"`{f}" not in doc and f not in ("-h", "--help"))
    assert not missing, f"docs/umc.md does not mention {missing}"
    assert {n for n, p in PROFILES.items() if p.network} == set(LEVELS.values())
