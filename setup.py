"""Builds the compiled loops: the exact engine's (umoec/engine/_kernels.c), the context-mixing
stage's (umoec/codec/_cm.c) and the probability path's (umoec/codec/_probs.c); everything else
is in pyproject.toml. The extensions are optional: without a C compiler the engine runs its
numpy references and the codec its Python references, which give the same bits, slower."""
import sys

from setuptools import Extension, setup

ARGS = [] if sys.platform == "win32" else ["-O3", "-ffp-contract=off", "-fno-fast-math"]

LINK = [] if sys.platform == "win32" else ["-pthread"]

HEADER = ["umoec/_native.h"]    # what the three share: clones, checked buffers

setup(ext_modules=[Extension("umoec.engine._kernels", ["umoec/engine/_kernels.c"], depends=HEADER,
                             extra_compile_args=ARGS + LINK, extra_link_args=LINK, optional=True),
                   Extension("umoec.codec._cm", ["umoec/codec/_cm.c"], depends=HEADER,
                             extra_compile_args=ARGS, optional=True),
                   Extension("umoec.codec._probs", ["umoec/codec/_probs.c"], depends=HEADER,
                             extra_compile_args=ARGS, optional=True)])
