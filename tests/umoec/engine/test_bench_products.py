"""The products benchmark runs end to end on a tiny workload (numbers are not checked: CPUs are
shared); it checks every path against BLAS itself and leaves UMOEC_MM8 as it found it."""
import os

import pytest

from bench import bench_products
from umoec.engine import kernels


@pytest.mark.skipif(kernels._c is None, reason="compiled kernels not built here")
def test_bench_products_runs_small(monkeypatch, capsys):
    monkeypatch.delenv("UMOEC_MM8", raising=False)
    monkeypatch.setattr(bench_products, "SHAPES", [(5, 9, 17)])
    bench_products.per_product(repeat=2)
    out = capsys.readouterr().out
    assert "5 x 9 x 17" in out and "scalar" in out
    assert "UMOEC_MM8" not in os.environ
