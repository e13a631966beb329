"""Selective-SSM mixer (Mamba-2 style): projections, causal conv, scan, gated norm.

Glossary
  B  batch       T  time       C  d_model      E  d_inner = EXPAND * C
  H  SSM heads   P  head_dim   N  d_state      K  d_conv (causal depthwise conv width)
  ch = E + 2N    channels through the conv: x (E), B (N), C (N)

One byte u_t (C,) goes through
    z, xBC, dt = in_proj(u)                (E, E + 2N, H)
    xBC        = silu(causal_conv(xBC))    depthwise, width K
    x, B, C    = split(xBC)
    dt         = softplus(dt + dt_bias);  A = -exp(A_log)        one decay per head
    y          = SSM(x, dt, A, B, C) + D * x                       see scan.py
    out        = out_proj(rmsnorm(y * silu(z)))
A_log, D and dt_bias are per head (H,). The recurrent state of one stream is the last K-1
pre-conv inputs (K-1, ch) and the SSM state (N, H, P).
"""
from __future__ import annotations

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from ..sizing import SSD_CHUNK, Dims
from .conv import causal_conv, conv_step
from .layers import Linear, LoraSeeds
from .scan import spread_rows, ssd_chunked, ssd_step


class SSMMixer(nn.Module):
    def __init__(self, d: Dims, depth: float, lora: LoraSeeds):
        super().__init__()
        self.d = d
        E, H, K, ch = d.d_inner, d.n_heads, d.d_conv, d.conv_channels
        self.in_proj = Linear(d.d_model, d.in_proj_out, **lora.linear())
        self.conv_weight = nn.Parameter(torch.empty(ch, K).uniform_(-K ** -0.5, K ** -0.5))
        self.conv_bias = nn.Parameter(torch.zeros(ch))
        # dt0 log-uniform in [1e-3, 0.1]; dt_bias = softplus^-1(dt0); A in [1, 16]; D = 1
        dt0 = torch.exp(torch.rand(H) * (math.log(0.1) - math.log(1e-3)) + math.log(1e-3))
        self.dt_bias = nn.Parameter(dt0 + torch.log(-torch.expm1(-dt0)))
        self.A_log = nn.Parameter(torch.log(torch.empty(H).uniform_(1.0, 16.0)))
        self.D = nn.Parameter(torch.ones(H))
        self.norm_weight = nn.Parameter(torch.ones(E))
        self.out_proj = Linear(E, d.d_model, std=depth * E ** -0.5, **lora.linear())

    def _split(self, zxbcdt: torch.Tensor):
        d = self.d
        return zxbcdt.split([d.d_inner, d.conv_channels, d.n_heads], dim=-1)

    def _finish(self, y: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
        """Gated RMSNorm and out_proj. y (..., H, P); z (..., E)."""
        y = F.rms_norm(y.flatten(-2) * F.silu(z), (self.d.d_inner,), self.norm_weight, 1e-5)
        return self.out_proj(y)                                          # (..., C)

    def forward(self, u: torch.Tensor) -> torch.Tensor:
        """Parallel form: u (B, T, C) -> (B, T, C), starting from an empty state."""
        d = self.d
        Bsz, T, _ = u.shape
        # everything between the two projections runs in the parameters' precision (fp32),
        # also under bf16 autocast: the scan's cumulative decays need it
        z, xbc, dt = self._split(self.in_proj(u).to(self.A_log.dtype))   # (B, T, E/ch/H)
        xbc = F.silu(causal_conv(xbc, self.conv_weight, self.conv_bias))  # (B, T, ch)
        x, Bm, Cm = xbc.split([d.d_inner, d.d_state, d.d_state], dim=-1)
        x = x.reshape(Bsz, T, d.n_heads, d.head_dim)                     # (B, T, H, P)
        dt = F.softplus(dt + self.dt_bias)                               # (B, T, H)
        with torch.autocast(u.device.type, enabled=False):
            y = ssd_chunked(x, dt, -torch.exp(self.A_log), Bm.contiguous(), Cm.contiguous(),
                            self.D, SSD_CHUNK)                           # (B, T, H, P)
        return self._finish(y, z)

    def init_state(self, batch: int, like: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        d = self.d
        conv = like.new_zeros(batch, d.d_conv - 1, d.conv_channels)      # (B, K-1, ch)
        ssm = like.new_zeros(batch, d.d_state, d.n_heads, d.head_dim)    # (B, N, H, P)
        return conv, ssm

    def step(self, u: torch.Tensor, conv: torch.Tensor, ssm: torch.Tensor,
             rows: torch.Tensor | None = None):
        """Recurrent form: u (B, C) -> (out (B, C), new conv state (B, K-1, ch)); ssm (B, N, H, P)
        is updated in place.

        rows (R,): step only these streams of the state; u is then (R, C), conv and ssm hold all
        streams and both are updated in place (the other streams keep theirs exactly).
        """
        d = self.d
        z, xbc, dt = self._split(self.in_proj(u).to(self.A_log.dtype))   # (B, E/ch/H)
        window = conv if rows is None else conv.index_select(0, rows)    # (B, K-1, ch)
        y = conv_step(window, xbc, self.conv_weight, self.conv_bias)
        new = torch.cat([window[:, 1:], xbc.unsqueeze(1)], dim=1)        # (B, K-1, ch)
        if rows is not None:
            new = conv.index_copy_(0, rows, new)
        xbc = F.silu(y)
        dt = F.softplus(dt + self.dt_bias)                               # (B, H)
        if rows is not None:  # every stream steps the SSM, the others with dt = 0 (unchanged)
            xbc, dt = spread_rows(xbc, rows, ssm.shape[0]), spread_rows(dt, rows, ssm.shape[0])
        x, Bm, Cm = xbc.split([d.d_inner, d.d_state, d.d_state], dim=-1)
        x = x.reshape(-1, d.n_heads, d.head_dim)                         # (B, H, P)
        y = ssd_step(ssm, x, dt, -torch.exp(self.A_log), Bm, Cm, self.D)  # (B, H, P)
        if rows is not None:
            y = y.index_select(0, rows)
        return self._finish(y, z), new
