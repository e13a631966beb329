"""Causal depthwise convolution over time, channels last, with a hand-written backward.

Glossary
  B  batch   T  time   ch  channels   K  kernel width (d_conv)

    y[t, c] = bias[c] + sum_{k < K} w[c, k] * x[t - (K - 1) + k, c]     (x before t = 0 is zero)

so w[:, K-1] multiplies the current input. PyTorch's grouped conv1d wants channels first and its
CPU backward for depthwise kernels is slow; K shifted multiply-adds on (B, T, ch) in each
direction are ~3x faster here (measured in docs/model.md) and need no transposes.
Each tap's weights are read as a row of w^T made contiguous (`taps`): the column w[:, k] is
strided, and a strided broadcast operand sends addcmul to a slow path (3-7x slower, measured).
"""
from __future__ import annotations

import torch


class CausalConv(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        """x (B, T, ch), w (ch, K), b (ch,) -> y (B, T, ch)."""
        T, K = x.shape[1], w.shape[1]
        wt = taps(w)
        y = torch.addcmul(b, x, wt[K - 1])
        for k in range(K - 1):
            s = K - 1 - k                      # how far back tap k looks
            if s < T:
                y[:, s:].addcmul_(x[:, :T - s], wt[k])
        ctx.save_for_backward(x, w)
        return y

    @staticmethod
    def backward(ctx, gy: torch.Tensor):
        x, w = ctx.saved_tensors
        T, K = x.shape[1], w.shape[1]
        gy = gy.contiguous()
        wt = taps(w)
        gx = gy * wt[K - 1]
        gw = torch.zeros_like(w)
        gw[:, K - 1] = (gy * x).sum((0, 1))
        for k in range(K - 1):
            s = K - 1 - k
            if s < T:
                gx[:, :T - s].addcmul_(gy[:, s:], wt[k])
                gw[:, k] = (gy[:, s:] * x[:, :T - s]).sum((0, 1))
        return gx, gw, gy.sum((0, 1))


def taps(w: torch.Tensor) -> torch.Tensor:
    """w (ch, K) -> (K, ch) contiguous: row k holds tap k's weights for every channel."""
    return w.t().contiguous()


def causal_conv(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return CausalConv.apply(x, w, b)


def conv_step(window: torch.Tensor, x: torch.Tensor, w: torch.Tensor,
              b: torch.Tensor) -> torch.Tensor:
    """One position of `causal_conv`: window (B, K-1, ch) the previous inputs, x (B, ch) the
    current one -> y (B, ch), adding the taps in CausalConv.forward's order."""
    K, wt = w.shape[1], taps(w)
    y = torch.addcmul(b, x, wt[K - 1])
    for k in range(K - 1):
        y.addcmul_(window[:, k], wt[k])
    return y
