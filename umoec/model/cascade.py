"""Cascade: exact integer order-1..3 byte-context statistics plus a small learned mixer.

Glossary
  B  batch   T  time   K  number of orders (1, 2, 3)   Dh  cascade.d_hidden   V  256 bytes
  ctx_k(t)   the k bytes x_{t-k+1..t} (bytes before the stream start read as the value 256)
  bucket     order 1: the byte itself (257 buckets, exact); orders >= 2: a multiplicative hash
             of the context into 2**CASCADE_HASH_BITS buckets (collisions are shared by both forms)

For every order and position t, over the earlier positions s < t with the same bucket (whose next
byte x_{s+1} is already known at t):
  pred_k  the byte that followed the most recent such s            (a prediction for x_{t+1})
  run_k   how many consecutive occurrences ended with that byte  (saturating at CASCADE_CAP)
  cnt_k   how many such s there are                              (saturating at CASCADE_CAP)
These are integers, identical in both forms: the parallel form sorts positions by (bucket, time)
and reads each position's predecessor; the step form keeps per-stream tables (last byte, run,
count) and updates them with (ctx_{t-1} -> x_t) before looking up ctx_t.

Mixer: features f (has, log run, log count per order, pairwise agreement of the predictions)
-> Linear(Dh) -> SiLU -> Linear(2K) = (beta, gamma).
  alone logits  z_c[v] = sum_k beta_k [pred_k == v]     the cascade's own distribution
                                                        (uniform over bytes nobody predicts)
  mixed logits  log_softmax(model)[v] + sum_k gamma_k [pred_k == v]
Where max softmax(z_c) >= cascade.threshold the cascade is used alone and the big model skips the
byte (all blocks keep their state); elsewhere the model runs and its distribution is mixed.
"""
from __future__ import annotations

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from ..sizing import CASCADE_CAP, CASCADE_FEATURES, CASCADE_HASH_BITS, CASCADE_ORDERS, VOCAB
from .layers import Linear

START = 256                                     # the value of "before the stream start"
_HASH_MULT = 2654435761                         # Knuth's multiplicative hash (32 bits)


def _table_layout() -> tuple[list[int], list[int]]:
    """Bucket count and table offset of every order."""
    sizes = [VOCAB + 1 if k == 1 else 1 << CASCADE_HASH_BITS for k in CASCADE_ORDERS]
    offsets = [sum(sizes[:i]) for i in range(len(sizes))]
    return sizes, offsets


SIZES, OFFSETS = _table_layout()
N_BUCKETS = sum(SIZES)


def bucket(values: torch.Tensor, order: int) -> torch.Tensor:
    """Context value sum_i c_i * 257**i (int64) -> bucket index within its order's table."""
    if order == 1:
        return values
    return ((values * _HASH_MULT) & 0xFFFFFFFF) >> (32 - CASCADE_HASH_BITS)


def _previous(v: torch.Tensor, has: torch.Tensor) -> torch.Tensor:
    """v shifted one place right along time (the predecessor's value), 0 where there is none."""
    return torch.where(has, torch.cat([v.new_zeros(v.shape[0], 1), v[:, :-1]], dim=1), 0)


def context_stats(x: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """Parallel form: x (B, T) -> pred, run, cnt (B, T, K) int64 and has (B, T, K) bool."""
    B, T = x.shape
    x = x.long()
    j = torch.arange(T, device=x.device).expand(B, T)
    nxt = torch.cat([x[:, 1:], x.new_full((B, 1), -1)], dim=1)          # x_{s+1}; -1 unknown
    outs = []
    for k in CASCADE_ORDERS:
        padded = F.pad(x, (k - 1, 0), value=START)
        value = sum(padded[:, k - 1 - i:k - 1 - i + T] * (VOCAB + 1) ** i for i in range(k))
        b = bucket(value, k)                                             # (B, T)
        perm = (b * T + j).argsort(dim=1)                                # by (bucket, time)
        sb, sv = b.gather(1, perm), nxt.gather(1, perm)
        new_group = torch.ones_like(sb, dtype=torch.bool)
        new_group[:, 1:] = sb[:, 1:] != sb[:, :-1]
        brk = new_group.clone()
        brk[:, 1:] |= sv[:, 1:] != sv[:, :-1]
        group_start = torch.where(new_group, j, 0).cummax(1).values
        run = j - torch.where(brk, j, 0).cummax(1).values + 1           # run ending here
        cnt = j - group_start + 1                                        # occurrences so far
        has = ~new_group                                                 # predecessor exists
        sorted_stats = [_previous(sv, has), _previous(run, has).clamp(max=CASCADE_CAP),
                        _previous(cnt, has).clamp(max=CASCADE_CAP), has.long()]
        outs.append([torch.empty_like(s).scatter_(1, perm, s) for s in sorted_stats])
    pred, run, cnt, has = (torch.stack([o[i] for o in outs], dim=-1) for i in range(4))
    return pred, run, cnt, has.bool()


class Cascade(nn.Module):
    def __init__(self, d_hidden: int):
        super().__init__()
        K = len(CASCADE_ORDERS)
        self.hidden = Linear(CASCADE_FEATURES, d_hidden, bias=True)
        self.out = Linear(d_hidden, 2 * K, bias=True)

    # -- the mixer (same code for both forms) ----------------------------------------------------
    @staticmethod
    def features(pred, run, cnt, has, dtype) -> torch.Tensor:
        """(..., K) integer statistics -> (..., CASCADE_FEATURES) floats."""
        scale = 1.0 / math.log1p(CASCADE_CAP)
        agree = [(has[..., a] & has[..., b] & (pred[..., a] == pred[..., b])).to(dtype)
                 for a in range(pred.shape[-1]) for b in range(a + 1, pred.shape[-1])]
        return torch.cat([has.to(dtype), torch.log1p(run.to(dtype)) * scale,
                          torch.log1p(cnt.to(dtype)) * scale, torch.stack(agree, -1)], dim=-1)

    def mix(self, pred, run, cnt, has, dtype):
        """-> alone logits (..., V), boost (..., V) added to the model's log-probs, confidence."""
        K = pred.shape[-1]
        o = self.out(F.silu(self.hidden(self.features(pred, run, cnt, has, dtype)))).to(dtype)
        hasf = has.to(dtype)
        beta, gamma = o[..., :K] * hasf, o[..., K:] * hasf
        zeros = o.new_zeros(*pred.shape[:-1], VOCAB)
        alone = zeros.scatter_add(-1, pred, beta)        # orders added in turn where they agree
        boost = zeros.scatter_add(-1, pred, gamma)
        conf = torch.softmax(alone.detach(), dim=-1).amax(-1)
        return alone, boost, conf

    # -- parallel form ---------------------------------------------------------------------------
    def forward(self, x: torch.Tensor, dtype: torch.dtype):
        """x (B, T) -> alone (B, T, V), boost (B, T, V), confidence (B, T)."""
        return self.mix(*context_stats(x), dtype)

    # -- recurrent form --------------------------------------------------------------------------
    @staticmethod
    def init_state(batch: int, device) -> dict:
        K = len(CASCADE_ORDERS)
        return {"hist": torch.full((batch, max(CASCADE_ORDERS)), START, dtype=torch.long,
                                   device=device),
                "prev": torch.zeros(batch, K, dtype=torch.long, device=device),
                "last": torch.full((batch, N_BUCKETS), -1, dtype=torch.int16, device=device),
                "run": torch.zeros(batch, N_BUCKETS, dtype=torch.int16, device=device),
                "cnt": torch.zeros(batch, N_BUCKETS, dtype=torch.int16, device=device)}

    @staticmethod
    def update_stats(byte: torch.Tensor, st: dict, t: int):
        """Record (ctx_{t-1} -> byte) and look up ctx_t: -> pred, run, cnt (B, K) long, has."""
        byte = byte.long()
        if t > 0:
            idx = st["prev"]
            b16 = byte.to(torch.int16).unsqueeze(1).expand_as(idx)
            same = st["last"].gather(1, idx) == b16
            run = torch.where(same, (st["run"].gather(1, idx) + 1).clamp(max=CASCADE_CAP), 1)
            cnt = (st["cnt"].gather(1, idx) + 1).clamp(max=CASCADE_CAP)
            st["last"].scatter_(1, idx, b16)
            st["run"].scatter_(1, idx, run.to(torch.int16))
            st["cnt"].scatter_(1, idx, cnt.to(torch.int16))
        st["hist"] = torch.cat([byte.unsqueeze(1), st["hist"][:, :-1]], dim=1)
        cols = []
        for k, off in zip(CASCADE_ORDERS, OFFSETS, strict=True):
            value = sum(st["hist"][:, i] * (VOCAB + 1) ** i for i in range(k))
            cols.append(bucket(value, k) + off)
        idx = torch.stack(cols, dim=1)                                    # (B, K)
        st["prev"] = idx
        last = st["last"].gather(1, idx).long()
        has = last >= 0
        return (last.clamp(min=0), st["run"].gather(1, idx).long(),
                st["cnt"].gather(1, idx).long(), has)

    def step(self, byte: torch.Tensor, st: dict, t: int, dtype: torch.dtype):
        """byte (B,) at position t -> alone (B, V), boost (B, V), confidence (B,)."""
        return self.mix(*self.update_stats(byte, st, t), dtype)
