"""Plausible training signals for the simulator, each a pure function of (seed, step, ...).

Purity matters: a simulated run stopped and resumed from a checkpoint continues exactly the same
series, as a real resumed run does. Shapes follow what a byte-level MoE model shows: bpb falling
from 8 (uniform bytes) toward a floor, expert loads starting skewed and evened out by the
balancing bias, MoD fractions near capacity, hidden states separating into clusters with depth.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


def rng(seed: int, *keys: int) -> np.random.Generator:
    return np.random.default_rng([seed & 0xFFFFFFFF, *[k & 0xFFFFFFFF for k in keys]])


@dataclass(frozen=True)
class Shape:
    """The run's geometry, derived once from its config."""

    seed: int
    total_steps: int
    n_blocks: int
    moe_blocks: tuple[int, ...]
    n_routed: int
    bias_lr: float
    mod_blocks: tuple[int, ...]
    capacity: float
    exit_blocks: tuple[int, ...]
    n_mtp: int
    cascade: bool
    bytes_per_step: int
    target_bpb: float
    bytes_per_sec: float

    @property
    def tau(self) -> float:  # time constant of the fast part of the loss curve
        return max(5.0, 0.03 * self.total_steps)


def progress(shape: Shape, step: int) -> float:
    """0 at the start of training, approaching 1 as the slow part of the curve settles."""
    return 1.0 - math.exp(-step / max(10.0, 0.35 * shape.total_steps))


def clean_bpb(shape: Shape, step: int) -> float:
    """Noise-free training bpb of the final head after `step` steps."""
    fast = math.exp(-step / shape.tau)
    slow = 1.0 - progress(shape, step)
    return shape.target_bpb + (8.0 - shape.target_bpb) * (0.75 * fast + 0.25 * slow)


def train_bpb(shape: Shape, step: int) -> float:
    gap = clean_bpb(shape, step) - shape.target_bpb
    return max(0.05, clean_bpb(shape, step) + rng(shape.seed, step, 1).normal(0, 0.03 + 0.04 * gap))


def val_bpb(shape: Shape, step: int) -> float:
    """Validation bpb: the smooth curve plus a generalisation gap that widens late in training."""
    gap = 0.04 + 0.06 * progress(shape, step)
    return clean_bpb(shape, step) + gap + rng(shape.seed, step, 2).normal(0, 0.01)


def head_bpbs(shape: Shape, step: int, final_bpb: float) -> dict[str, float]:
    """bpb of every head: early exits are worse the earlier they sit, MTP heads worse further out."""
    r = rng(shape.seed, step, 3)
    heads = {"final": final_bpb}
    for b in shape.exit_blocks:
        depth = (b + 1) / shape.n_blocks
        heads[f"exit_{b}"] = final_bpb + 0.9 * (1.0 - depth) + abs(r.normal(0, 0.02))
    for k in range(1, shape.n_mtp + 1):
        heads[f"mtp_{k}"] = final_bpb + 0.9 * k + abs(r.normal(0, 0.03))
    if shape.cascade:  # an order-3 context model learns fast and plateaus high
        heads["cascade"] = 3.1 + 4.9 * math.exp(-step / (0.3 * shape.tau)) + r.normal(0, 0.02)
    return heads


def grad_norm(shape: Shape, step: int) -> float:
    r = rng(shape.seed, step, 4)
    base = 0.35 + 2.5 * math.exp(-step / shape.tau)
    spike = 3.0 if r.random() < 0.01 else 1.0  # occasional spikes, as in real runs
    return float(base * spike * math.exp(r.normal(0, 0.15)))


def tokens_per_sec(shape: Shape, step: int) -> float:
    return float(shape.bytes_per_sec * math.exp(rng(shape.seed, step, 5).normal(0, 0.05)))


def _skew(shape: Shape, block: int) -> np.ndarray:
    """Initial expert preference of one MoE block (what the router does before balancing)."""
    z = rng(shape.seed, 10_000 + block).normal(0, 1.2, shape.n_routed)
    p = np.exp(z)
    return p / p.sum()


def routing(shape: Shape, step: int) -> tuple[np.ndarray, np.ndarray]:
    """(load, bias), each (n_moe_blocks, n_routed); loads sum to 1 per block."""
    n = shape.n_routed
    loads, biases = [], []
    for i, block in enumerate(shape.moe_blocks):
        tau_b = shape.tau * (1.0 + 0.5 * i)
        decay = math.exp(-step / tau_b)
        skew = _skew(shape, block) - 1.0 / n
        noise = rng(shape.seed, step, 20 + block).normal(0, 0.08 / n, n)
        load = np.clip(1.0 / n + skew * decay + noise, 1e-4, None)
        loads.append(load / load.sum())
        # The bias integrates sign(mean - load): it moves against the initial overload and
        # saturates once loads are even.
        biases.append(-np.sign(skew) * shape.bias_lr * tau_b * (1.0 - decay)
                      * np.minimum(1.0, np.abs(skew) * n * 4))
    return np.array(loads), np.array(biases)


def mod_fractions(shape: Shape, step: int) -> tuple[dict[int, float], dict[int, float]]:
    """(training fraction, inference fraction) per MoD block."""
    r = rng(shape.seed, step, 6)
    train, infer = {}, {}
    for block in shape.mod_blocks:
        train[block] = float(np.clip(shape.capacity + r.normal(0, 0.01), 0.0, 1.0))
        drift = 0.2 * math.exp(-step / shape.tau) * (1 if block % 2 else -1)
        infer[block] = float(np.clip(shape.capacity + drift + r.normal(0, 0.02), 0.0, 1.0))
    return train, infer


def activation_stats(shape: Shape, step: int, block: int) -> dict[str, float]:
    """mean ~1.0, std ~0.3 with a per-block drift and heavier tails deeper in the stack."""
    r = rng(shape.seed, step, 30 + block)
    p = progress(shape, step)
    mean = 1.0 + 0.05 * block + 0.1 * p + r.normal(0, 0.01)
    std = 0.3 + 0.02 * block + 0.05 * p + abs(r.normal(0, 0.005))
    tail = 1.0 + 0.15 * block / max(1, shape.n_blocks - 1)
    skew = 0.03 * block
    return {"mean": mean, "std": std, "p1": mean - 2.326 * std * tail,
            "p25": mean - 0.674 * std, "p50": mean + skew * std, "p75": mean + 0.674 * std,
            "p99": mean + 2.326 * std * tail * (1.0 + skew)}


def hidden_points(shape: Shape, step: int, block: int, n: int = 200) -> np.ndarray:
    """(n, 2) PCA-like points: block 0 one cluster; deeper blocks split into more, further apart."""
    r = rng(shape.seed, step, 40 + block)
    k = 1 if block == 0 else min(1 + block, 6)
    depth = block / max(1, shape.n_blocks - 1)
    radius = 4.0 * depth * (0.3 + 0.7 * progress(shape, step))
    angles = 2 * math.pi * np.arange(k) / k + 0.3 * block
    centres = np.stack([radius * np.cos(angles), radius * np.sin(angles)], axis=1)
    which = r.integers(0, k, n)
    return centres[which] + r.normal(0, 1.0, (n, 2))
