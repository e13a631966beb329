"""The builds-side-by-side bench of the mixing stage runs end to end on a few bytes (its speeds
are not checked: CPUs are shared): a build of this checkout's _cm.c codes as the installed one,
and a revision that does not exist is refused with git's reason."""
import shutil

import pytest

from bench import bench_cm_builds as B
from umoec.codec import cm

pytestmark = pytest.mark.skipif(cm.backend() != "c" or shutil.which("git") is None,
                                reason="needs the compiled mixing stage and git")


def test_a_build_of_head_codes_as_the_installed_one(tmp_path):
    try:
        base = B.load(B.build_at("HEAD", tmp_path, ["-O0"]))   # the same integers, built fast
    except RuntimeError as exc:   # no C compiler on this machine
        pytest.skip(str(exc))
    rows = B.compare(b"the same bytes, the same file. " * 40, {"head": base, "this": cm._c}, 1)
    assert set(rows) == {"head", "this"}
    assert rows["head"]["paired"] == (1.0, 1.0) and rows["this"]["compress"] > 0
    assert cm._c is not base      # the installed build is back


def test_a_revision_that_does_not_exist_is_refused(tmp_path):
    with pytest.raises(RuntimeError, match="git show no-such-rev"):
        B.build_at("no-such-rev", tmp_path)


_INSTALLED = cm._c


class _Nudged:
    """The installed build with every mixer weight nudged before each call, by encoder and
    decoder alike: a stage that round-trips but writes other files."""

    @staticmethod
    def run(*args):
        args[14][:] += 1 << 12          # w (cm._run's argument order)
        return _INSTALLED.run(*args)


def test_builds_that_write_different_files_are_refused():
    with pytest.raises(AssertionError, match="different files"):
        B.compare(b"abcd " * 300, {"this": cm._c, "nudged": _Nudged}, 1)
