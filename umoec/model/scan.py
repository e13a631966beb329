"""The selective-SSM scan in three forms: fast chunked (training), slow reference, one step.

Recurrence (Mamba-2 / SSD, one scalar decay per head), for every head h and time t:
    h_t = exp(dt_t * A) * h_{t-1} + dt_t * x_t B_t^T        state (P, N)
    y_t = h_t C_t + D * x_t                                output (P,)

Glossary
  B  batch (streams)      T  time (bytes)        H  heads       P  channels per head
  N  state size           L  chunk length        c  chunk index
  a  = dt * A <= 0, the log-decay of one step; acs = its cumulative sum inside a chunk.

`ssd_chunked` computes the same outputs as the loop in `ssd_reference` with matrix products:
inside a chunk y_l = sum_{s<=l} exp(acs_l - acs_s) (C_l . B_s) dt_s x_s + D x_l (one (L, L)
matrix per chunk and head, dt and D folded into it so no (L, P)-sized product is materialised),
plus the state carried in from earlier chunks; the chunk-to-chunk recurrence is a short loop
over T / L chunks. On a CPU
this is ~10x faster than a per-byte loop for training (see docs/model.md). `ssd_step` is the
recurrent form the codec runs; `ssd_reference` is that same step in a loop, kept as the obviously
correct version the tests compare the fast one against.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F


class _ContiguousGrad(torch.autograd.Function):
    """Identity whose backward makes the incoming gradient contiguous, so the batched matmuls
    behind it get dense operands (a permuted gradient makes bmm fall back to one matrix at a
    time, ~3x slower here)."""

    @staticmethod
    def forward(ctx, x):
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad):
        return grad.contiguous()


def ssd_chunked(x: torch.Tensor, dt: torch.Tensor, A: torch.Tensor, Bm: torch.Tensor,
                Cm: torch.Tensor, D: torch.Tensor, chunk: int = 32) -> torch.Tensor:
    """y (B, T, H, P) = SSM(x) + D * x from x (B, T, H, P), dt (B, T, H) >= 0, A (H,) < 0,
    Bm/Cm (B, T, N), D (H,)."""
    Bsz, T, H, P = x.shape
    N = Bm.shape[-1]
    L = max(1, min(chunk, T))
    pad = (-T) % L
    if pad:  # zero padding at the end: dt = 0 means no decay and no input, so it is inert
        x = F.pad(x, (0, 0, 0, 0, 0, pad))
        dt = F.pad(dt, (0, 0, 0, pad))
        Bm = F.pad(Bm, (0, 0, 0, pad))
        Cm = F.pad(Cm, (0, 0, 0, pad))
    nc = (T + pad) // L
    dtc = dt.view(Bsz, nc, L, H).permute(0, 3, 1, 2)                             # (B, H, c, L)
    acs = (dtc * A[:, None, None]).cumsum(-1)                                    # (B, H, c, L)
    # contiguous copy: bmm on the permuted view would fall back to one matrix at a time
    xc = x.view(Bsz, nc, L, H, P).permute(0, 3, 1, 2, 4).contiguous()            # (B, H, c, L, P)
    Bc = Bm.view(Bsz, 1, nc, L, N)                                               # (B, 1, c, L, N)
    Cc = Cm.view(Bsz, 1, nc, L, N)
    # inside a chunk: scores[l, s] = (C_l . B_s) exp(acs_l - acs_s) dt_s for s <= l, + D on l = s
    causal = torch.ones(L, L, dtype=torch.bool, device=x.device).tril()
    seg = (acs.unsqueeze(-1) - acs.unsqueeze(-2)).masked_fill(~causal, float("-inf"))
    scores = (Cc @ Bc.transpose(-1, -2)) * seg.exp() * dtc.unsqueeze(-2)         # (B, H, c, L, L)
    scores = scores + D[:, None, None, None] * torch.eye(L, dtype=x.dtype, device=x.device)
    y = scores @ xc                                                              # (B, H, c, L, P)
    # state each chunk leaves behind (from its own inputs), then carry states across chunks
    to_end = ((acs[..., -1:] - acs).exp() * dtc).unsqueeze(-1)                   # (B, H, c, L, 1)
    chunk_states = xc.transpose(-1, -2) @ (Bc * to_end)                          # (B, H, c, P, N)
    chunk_decay = acs[..., -1].exp()                                             # (B, H, c)
    state = x.new_zeros(Bsz, H, P, N)
    starts = []
    for c in range(nc):
        starts.append(state)
        state = chunk_decay[:, :, c, None, None] * state + chunk_states[:, :, c]
    start = torch.stack(starts, dim=2)                                           # (B, H, c, P, N)
    y = y + (Cc * acs.exp().unsqueeze(-1)) @ start.transpose(-1, -2)             # (B, H, c, L, P)
    y = _ContiguousGrad.apply(y)
    return y.permute(0, 2, 3, 1, 4).reshape(Bsz, nc * L, H, P)[:, :T]


def ssd_step(state: torch.Tensor, x: torch.Tensor, dt: torch.Tensor, A: torch.Tensor,
             Bm: torch.Tensor, Cm: torch.Tensor, D: torch.Tensor) -> torch.Tensor:
    """One byte: updates state (B, N, H, P) in place and returns y (B, H, P) (D skip included).

    x (B, H, P), dt (B, H), A (H,), Bm/Cm (B, N), D (H,). The state is stored N-major so that the
    decay, the input and the read-out each stream over it once with contiguous inner rows
    (a (1, N) @ (N, H*P) product per stream); this layout is ~3x faster than (B, H, P, N).
    """
    Bsz, N, H, P = state.shape
    flat = state.view(Bsz, N, H * P)
    decay = (dt * A).exp().unsqueeze(-1).expand(Bsz, H, P).reshape(Bsz, 1, H * P)
    flat.mul_(decay)
    flat.addcmul_(Bm.unsqueeze(-1), (dt.unsqueeze(-1) * x).reshape(Bsz, 1, H * P))
    return torch.bmm(Cm.unsqueeze(1), flat).view(Bsz, H, P) + D.unsqueeze(-1) * x


def spread_rows(v: torch.Tensor, rows: torch.Tensor, full: int) -> torch.Tensor:
    """v (R, ...) of the streams `rows` -> (full, ...) with zeros for every other stream.

    How the step form steps only some streams of an SSM state: spread dt (and the inputs) this
    way and run `ssd_step` on all of them. The other streams get dt = 0: their decay exp(0 * A)
    is exactly 1 and their input dt * x exactly 0, so their state is left bit for bit. That
    costs three passes over the state; gathering the rows out and scattering them back (the
    obvious alternative) costs two extra passes over what it moves, which is more as soon as
    more than ~40% of the streams step, and the codec's blocks usually step nearly all of them.
    """
    return v.new_zeros(full, *v.shape[1:]).index_copy_(0, rows, v)


def ssd_reference(x: torch.Tensor, dt: torch.Tensor, A: torch.Tensor, Bm: torch.Tensor,
                  Cm: torch.Tensor, D: torch.Tensor) -> torch.Tensor:
    """The slow, obviously correct scan: `ssd_step` in a loop over time. Same shapes as above."""
    Bsz, T, H, P = x.shape
    state = x.new_zeros(Bsz, Bm.shape[-1], H, P)
    ys = [ssd_step(state, x[:, t], dt[:, t], A, Bm[:, t], Cm[:, t], D) for t in range(T)]
    return torch.stack(ys, dim=1)
