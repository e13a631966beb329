"""The engine's SIMD twins side by side: microseconds per call of the loops that have AVX-512 and
AVX2 twins or vectorised roundings (_kernels.c), on every path this CPU has (`_kernels.simd`:
avx512, avx2, plain), each result checked equal to the numpy reference.

Rows are the shapes a fast step runs in one process of two (32 streams of the shipped model):
the SSM mixer between its projections (state update, SiLU, requantisation) and requantisation
of 32 x 192 products with and without SiLU (the difference is SiLU's). Paths alternate and each
cell is the best of ROUNDS rounds (BENCH_TWINS_ROUNDS, default 20), since the machines here are
shared. (The roundings of RMSNorm and of row quantisation vectorise on every path: the same
loop, so they are not rows here.)
"""
from __future__ import annotations

import os
import time

import numpy as np

from umoec.engine import kernels
from umoec.engine.model import ExactModel

PATHS = ("avx512", "avx2", "plain")
ROWS = 32


def _cases(em: ExactModel, rows: int):
    """name -> call(fresh) on fixed random inputs of the shapes of a fast step (fresh: the mixer
    starts from a zero state, as for a check; else it carries one state from call to call)."""
    rng = np.random.default_rng(0)
    blk = em.blocks[min(1, len(em.blocks) - 1)]
    d = blk.d
    acc = rng.integers(-(1 << 14), 1 << 14, (rows, d.in_proj_out)).astype(np.float32)
    amax = rng.integers(1, 1 << 10, (rows, 1)).astype(np.int64)
    idx = np.arange(rows)
    products = rng.integers(-(1 << 17), 1 << 17, (rows, 2 * d.d_model)).astype(np.float32)
    ones, unit = np.ones((rows, 1), np.int64), np.ones(products.shape[1])

    carried = em.init_state(rows)

    def mixer(fresh: bool):
        st = em.init_state(rows) if fresh else carried
        return kernels.mixer_core(acc, amax, blk, st.conv[blk.index], st.ssm[blk.index], idx)
    return {
        f"SSM mixer, {rows} streams": mixer,
        f"requant {rows} x {products.shape[1]}": lambda fresh: kernels.requant(
            products, ones, unit, None, False),
        f"requant + SiLU {rows} x {products.shape[1]}": lambda fresh: kernels.requant(
            products, ones, unit, None, True),
    }


def _same(a, b) -> bool:
    if isinstance(a, tuple):
        return all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(np.array_equal(a, b))


def per_call(em: ExactModel, rounds: int, number: int = 50, rows: int = ROWS) -> dict:
    """{case: {path: best microseconds per call}} for the paths this CPU has; raises SystemExit
    when a path's result differs from the numpy reference."""
    c = kernels._c
    if c is None:
        raise SystemExit("the compiled kernels are not built here")
    was = c.simd()
    paths = [p for p in PATHS if c.simd(p) == p]
    cases = _cases(em, rows)
    best: dict = {name: {} for name in cases}
    try:
        for name, call in cases.items():
            kernels._c = None
            try:
                ref = call(True)
            finally:
                kernels._c = c
            for p in paths:
                c.simd(p)
                if not _same(call(True), ref):
                    raise SystemExit(f"{name}: the {p} path differs from the numpy reference")
        for _ in range(rounds):
            for name, call in cases.items():
                for p in paths:
                    c.simd(p)
                    t = time.perf_counter()
                    for _ in range(number):
                        call(False)
                    us = (time.perf_counter() - t) / number * 1e6
                    best[name][p] = min(best[name].get(p, us), us)
    finally:
        c.simd(was)
    return best


def main() -> None:
    from umoec.compress import api
    rounds = int(os.environ.get("BENCH_TWINS_ROUNDS", "20"))
    model = api.open_model(None)
    em = ExactModel(model.tensors, model.build_config())
    best = per_call(em, rounds)
    paths = [p for p in PATHS if any(p in row for row in best.values())]
    print(f"microseconds per call, best of {rounds} rounds; the CPU's choice: "
          f"{kernels._c.simd()}")
    print(f"{'':>28}" + "".join(f"{p:>10}" for p in paths) + f"{'plain / best':>14}")
    names = list(best)
    best["SiLU (the difference)"] = {p: best[names[2]][p] - best[names[1]][p] for p in paths}
    for name, row in best.items():
        ratio = row["plain"] / min(row.values())
        print(f"{name:>28}" + "".join(f"{row[p]:10.1f}" for p in paths) + f"{ratio:14.2f}")


if __name__ == "__main__":
    main()
