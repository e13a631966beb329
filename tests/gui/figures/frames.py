"""Small, hand-made DataFrames shaped like umoec/metrics/read.py's results, for the figure tests."""
import numpy as np
import pandas as pd


def routing(steps=(10, 20, 30), blocks=(1, 3), n=4, skew=0.0) -> pd.DataFrame:
    rows = []
    for s in steps:
        for b in blocks:
            load = np.full(n, 1.0 / n)
            load[0] += skew
            load /= load.sum()
            rows += [(s, b, e, load[e], 0.01 * e - 0.015) for e in range(n)]
    return pd.DataFrame(rows, columns=["step", "block_idx", "expert_idx", "load", "bias"])


def mod(steps=(10, 20), blocks=(2, 5), capacity=0.5, inference=True) -> pd.DataFrame:
    rows = [(s, b, capacity + 0.01 * b, capacity, (capacity + 0.1) if inference else None)
            for s in steps for b in blocks]
    return pd.DataFrame(rows, columns=["step", "block_idx", "fraction_processed", "capacity",
                                       "fraction_inference"])


def activations(blocks=(0, 1, 2), step=200) -> pd.DataFrame:
    rows = [(step, b, 1.0 + b, 0.3, 0.2 + b, 0.8 + b, 1.0 + b, 1.2 + b, 1.9 + b) for b in blocks]
    return pd.DataFrame(rows, columns=["step", "block_idx", "mean", "std", "p1", "p25", "p50", "p75",
                                       "p99"])


def hidden(blocks=(0, 1, 2), n=20, step=50) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    rows = [(step, b, i, *rng.normal(0, 1 + b, 2)) for b in blocks for i in range(n)]
    return pd.DataFrame(rows, columns=["step", "block_idx", "sample_idx", "pc1", "pc2"])


def is_reference(trace) -> bool:
    return trace.line.dash == "dash"
