"""The error root: a leaf module; every command prints a UserError as one line with its exit code."""
import ast
from pathlib import Path

import pytest

from umoec import cli, errors
from umoec.codec import CodecError, CodecSettings, DecodeMismatch, FormatError, compress
from umoec.compress import api, profiles
from umoec.predict.order2 import Order2Predictor


def test_errors_imports_nothing_from_umoec_and_cli_reexports_it():
    tree = ast.parse(Path(errors.__file__).read_text(encoding="utf-8"))
    modules = [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    modules += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    assert modules == ["__future__"]
    assert cli.UserError is errors.UserError
    assert (cli.EXIT_FAILURE, cli.EXIT_USAGE, cli.EXIT_INTERRUPTED) == (1, 2, 130)


def test_codec_errors_are_user_errors_with_their_exit_codes():
    assert issubclass(CodecError, errors.UserError)
    assert FormatError("x").exit_code == errors.EXIT_USAGE
    assert DecodeMismatch("x").exit_code == errors.EXIT_FAILURE


def test_an_unknown_profile_is_a_user_error_and_in_a_file_a_format_error():
    with pytest.raises(errors.UserError) as info:
        profiles.get("warp")
    assert str(info.value) == "unknown profile 'warp'; choose one of turbo, fast, balanced, cm"
    assert info.value.exit_code == 2
    blob = compress(b"hello", Order2Predictor(), CodecSettings(profile="warp"))
    with pytest.raises(FormatError, match=r"^in\.umc: unknown profile 'warp'; choose one of"):
        api.decompress_frame(blob, source="in.umc")


@pytest.mark.parametrize("exc,code,line", [
    (CodecError("cannot read .umc file x: No such file"), 2,
     "decompress: cannot read .umc file x: No such file"),
    (DecodeMismatch("block 3 does not decode"), 1, "decompress: block 3 does not decode"),
    (errors.UserError("is a directory: skipped", errors.EXIT_FAILURE), 1,
     "decompress: is a directory: skipped"),
    (KeyboardInterrupt(), 130, "decompress: interrupted"),
    (RuntimeError("boom"), 1, "decompress: error: RuntimeError: boom (run with --debug for details)"),
])
def test_run_main_prints_one_line_and_returns_the_exit_code(capsys, monkeypatch, exc, code, line):
    monkeypatch.delenv("UMOEC_DEBUG", raising=False)

    def main(argv):
        raise exc

    assert cli.run_main(main, "decompress", []) == code
    assert capsys.readouterr().err == line + "\n"
