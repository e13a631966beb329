"""Config fuzzing through `python -m bin.train`: a fuzzed file or --set never launches a run (no
run folder appears), never prints a traceback, and ends with one line on stderr and exit code 2.

test_config_fuzz.py fuzzes the schema (`C.build`, `C.loads`); this adds what only the command
line does: reading the file (binary junk, bad UTF-8, a folder, a device, a pipe), `--set`
parsing, and the decision to start. In process (`run_main(bin.train.main)`, the code path of the
CLI without a new interpreter) for the bulk, and a sample as real subprocesses.
"""
from __future__ import annotations

import contextlib
import io
import os
import random
import subprocess
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from bin import train as train_cli
from tests.conftest import ROOT
from tests.reliability.conftest import full_or_ci, record
from tests.reliability.helpers import PYTHON
from tests.reliability.test_config_fuzz import KEYS, configs, values
from umoec import config as C
from umoec.cli import run_main

IN_PROCESS = full_or_ci(3000, 150)
SUBPROCESSES = full_or_ci(200, 8)
FUZZ = dict(deadline=None, suppress_health_check=list(HealthCheck), database=None)
COUNTS = {"in_process": 0, "valid_skipped": 0, "subprocess": 0,
          "messages_echoing_control_characters": 0}

overrides = st.lists(st.one_of(
    st.builds(lambda k, v: f"{k}={v}", st.sampled_from(KEYS + ["model", "bogus.key", "", "."]),
              st.one_of(st.text(max_size=20), st.sampled_from(
                  ["1e999", "nan", "-inf", "[1,", "{a: 1}", "!!python/object:os.system", "*x",
                   "0x7fffffffffffffffffff", "null", "~", "'", "\x00"]))),
    st.text(max_size=30)).filter(lambda s: "\n" not in s and "\r" not in s), max_size=4)
# (a newline typed into one's own --set value is echoed back as typed: not fuzzed)


def documents():
    """YAML text: fuzzed configs and values dumped as YAML, arbitrary text, or raw bytes."""
    dumped = st.one_of(configs(), values).map(
        lambda d: yaml.safe_dump(d, allow_unicode=True, sort_keys=False))
    return st.one_of(dumped.map(str.encode), st.text(max_size=300).map(str.encode),
                     st.binary(max_size=300))


def would_start(path: Path, sets: list[str]) -> bool:
    """True when the config is valid: such a case would train, so it is not run here."""
    try:
        C.load(path, sets)
    except C.ConfigError:
        return False
    except Exception:
        return False
    return True


CONTROL = ("\n", "\r", "\x1b", "\x85")


def check_refusal(code: int, stderr: str, out: Path, echoed: bool = False) -> None:
    """Exit 2; one line, or for several field errors a first line and one '  - ' line each.

    `echoed`: the input held line breaks or ESC, which the message may repeat (see the report)."""
    lines = [ln for ln in stderr.split("\n") if ln.strip()]  # (keys may hold U+2028)
    assert code == 2, (code, stderr)
    assert lines and lines[0].startswith("train: "), stderr
    if not all(ln.startswith("  - ") for ln in lines[1:]):
        assert echoed, stderr
        COUNTS["messages_echoing_control_characters"] += 1
    assert "Traceback" not in stderr
    assert not out.exists(), "a run folder was created for a refused config"


@pytest.mark.slow
def test_fuzzed_configs_and_overrides_never_start_a_run(tmp_path):
    @settings(max_examples=IN_PROCESS, **FUZZ)
    @given(documents(), overrides)
    def case(doc, sets):
        cfg, out = tmp_path / "fuzz.yaml", tmp_path / "never"
        cfg.write_bytes(doc)
        if would_start(cfg, sets):
            COUNTS["valid_skipped"] += 1
            assume(False)
        argv = ["--config", str(cfg), "--out", str(out), *[a for s in sets for a in ("--set", s)]]
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            try:
                code = run_main(train_cli.main, "train", argv)
            except SystemExit as exc:  # argparse: e.g. an override that looks like an option
                code = exc.code
                assume(code == 2)
                return
        COUNTS["in_process"] += 1
        text = doc.decode("utf-8", "replace") + "".join(sets)
        check_refusal(code, err.getvalue(), out, any(c in text for c in CONTROL))
    case()
    record("config_cli_fuzz_in_process", {k: v for k, v in COUNTS.items() if k != "subprocess"})


def nasty_corpus(rng: random.Random, n: int) -> list[bytes]:
    fixed = [b"", b"\xff\xfe\x00", b"model: {d_model: .nan}", b"model:\n  d_model: 1e999999",
             b"a: &x [*x]", b"!!python/object/apply:os.system ['true']", b"{" * 500,
             b"training:\n  steps: -1\n", b"moe: {top_k: 99, n_routed: 2}", b"bogus: 1\n",
             b"model: [1, 2]", b"\x00" * 40, b"tier: tier9\n", "d_model: \u00e9".encode()]
    out = fixed[:n]
    while len(out) < n:
        *sections, field = rng.choice(KEYS).split(".")
        value = rng.choice(["-1", "1e308", "'x'", "[]", "{}", "null", "NaN", "99999999999999999999",
                            "true", "''", "0x10"])
        text = "".join(f"{'  ' * i}{s}:\n" for i, s in enumerate(sections))
        out.append(f"{text}{'  ' * len(sections)}{field}: {value}\n".encode())
    return out


@pytest.mark.slow
def test_real_cli_refuses_fuzzed_configs_with_one_line(tmp_path):
    for i, doc in enumerate(nasty_corpus(random.Random(99), SUBPROCESSES)):
        cfg, out = tmp_path / f"c{i}.yaml", tmp_path / f"out{i}"
        cfg.write_bytes(doc)
        if would_start(cfg, []):
            continue
        res = subprocess.run([PYTHON, "-m", "bin.train", "--config", str(cfg), "--out", str(out)],
                             cwd=ROOT, capture_output=True, text=True, timeout=120)
        check_refusal(res.returncode, res.stderr, out)
        COUNTS["subprocess"] += 1
    res = subprocess.run([PYTHON, "-m", "bin.train", "--config", str(tmp_path), "--out",
                          str(tmp_path / "dir")], cwd=ROOT, capture_output=True, text=True,
                         timeout=120)
    check_refusal(res.returncode, res.stderr, tmp_path / "dir")
    assert "is a folder" in res.stderr
    record("config_cli_fuzz_subprocess", {"cases": COUNTS["subprocess"] + 1})


# -- files that never end: devices and pipes ------------------------------------------------------
READERS = {
    "bin.train --config (umoec/config/io.py load)": "from umoec.config import load as f",
    "cockpit Load Config (gui/form.py load_file)": "from gui.form import load_file as f",
}
CHILD = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
{imp}
from pathlib import Path
try:
    f(Path(sys.argv[1]))
except MemoryError:
    print("MemoryError: read without bound")
except Exception as exc:
    print(type(exc).__name__ + ": " + str(exc))
"""


@pytest.mark.parametrize("reader", list(READERS))
@pytest.mark.parametrize("kind", ["/dev/zero", "fifo"])
def test_config_readers_refuse_devices_and_pipes_quickly(tmp_path, reader, kind):
    path = kind
    if kind == "fifo":
        path = str(tmp_path / "pipe.yaml")
        os.mkfifo(path)
    try:
        res = subprocess.run([PYTHON, "-c", CHILD.format(imp=READERS[reader]), path], cwd=ROOT,
                             capture_output=True, text=True, timeout=3)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{reader} still reading {kind} after 3 s")
    assert res.stdout.startswith(("ConfigError", "FormFileError")), res.stdout + res.stderr
