"""Builds the exact engine's compiled loops (umoec/engine/_kernels.c); everything else is in
pyproject.toml. The extension is optional: without a C compiler the engine runs its numpy
references, which give the same bits, slower."""
import sys

from setuptools import Extension, setup

ARGS = [] if sys.platform == "win32" else ["-O3", "-ffp-contract=off", "-fno-fast-math"]

LINK = [] if sys.platform == "win32" else ["-pthread"]

setup(ext_modules=[Extension("umoec.engine._kernels", ["umoec/engine/_kernels.c"],
                             extra_compile_args=ARGS + LINK, extra_link_args=LINK, optional=True)])
