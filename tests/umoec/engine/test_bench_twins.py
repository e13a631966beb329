"""The twins benchmark runs on a tiny workload (numbers are not checked: CPUs are shared): it
times every path this CPU has, refuses a path whose result differs from the reference, and
leaves the CPU's choice of path as it found it."""
import pytest

from bench import bench_twins
from umoec.engine import kernels
from umoec.engine.model import ExactModel


@pytest.fixture
def em(tiny_model):
    return ExactModel(tiny_model.tensors, tiny_model.build_config())


@pytest.mark.skipif(kernels._c is None, reason="compiled kernels not built here")
def test_bench_twins_times_every_path_the_cpu_has(em):
    was = kernels._c.simd()
    best = bench_twins.per_call(em, rounds=1, number=1, rows=5)
    assert kernels._c.simd() == was
    assert len(best) == 3 and all("plain" in row and min(row.values()) > 0 for row in best.values())
    assert all(was in row for row in best.values())


@pytest.mark.skipif(kernels._c is None, reason="compiled kernels not built here")
def test_bench_twins_refuses_a_path_that_differs(em, monkeypatch):
    real = kernels.requant

    def off_by_one(*args):        # wrong only on the compiled paths, not the reference
        return real(*args) + (kernels._c is not None)
    monkeypatch.setattr(kernels, "requant", off_by_one)
    was = kernels._c.simd()
    with pytest.raises(SystemExit, match=r"requant 5 x \d+: the \w+ path differs from the numpy reference"):
        bench_twins.per_call(em, rounds=1, number=1, rows=5)
    assert kernels._c.simd() == was
