"""The x86 filter's bench runs end to end on a few bytes (numbers are not checked): every column
is there, the filter is on for an executable, and missing peers are left out, not a crash."""
import platform

import pytest

from bench import bench_x86 as B
from umoec.compress.api import open_model


@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="x86 executables only")
def test_an_executable_gets_every_column_and_the_filter():
    exe = B.executables()
    assert "ls" in exe and exe["ls"].is_file()
    r = B.row(exe["ls"].read_bytes()[:40_000], open_model(), [])
    assert {"cm v10", "cm v10+x86", "umc (auto)", "xz -9e", "xz -9e --x86", "cm s"} <= set(r)
    assert any(k in r for k in ("cm v15+x86", "cm v16+x86")), r     # binary contexts, filtered
    assert all(v > 0 for v in r.values())
