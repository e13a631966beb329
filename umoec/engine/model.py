"""The coding model: the u-moec-tiny step form in exact integer arithmetic (numpy, no torch).

Glossary (as in umoec/model/, which this mirrors step for step)
  B  streams   C  d_model   E  d_inner   H  SSM heads   P  head_dim   N  d_state   K  d_conv
  X  routed experts   V  256 bytes   G  d_globals
  ACT / GATE / STATE / DECAY   fixed-point formats, see fixed.py

One step, for the byte x_t of every stream (the float model's `step`, umoec/model/model.py):
  h = byte embedding + patch embeddings                      embed
  cascade statistics -> alone logits, boost, confidence      cascade (integer tables)
  alive = not (confidence >= cascade threshold)
  for each block: MoD blocks process alive bytes with router score r > 0, gated by sigmoid(r);
      after an exit block, bytes whose exit head has p1 - p2 >= exit threshold leave
  logits = final head, or the exit head a byte left at; then the cascade's composition
Thresholds >= 1.0 switch a shortcut off (no rounding can make it fire).
Every decision (exits, cascade, MoD, top-k experts) compares integers; ties go to the lower index.
`kernels` holds the hot loops (norms, products' requantisation, the SSM mixer, MoE routing) in
compiled form when built, with numpy references they must equal bit for bit.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..codec.probs import DIST_FRAC_BITS, DIST_MAX, EXP_TABLE, WEIGHT_BITS
from ..sizing import VOCAB, dims
from . import cascade as casc
from . import kernels
from .adapt import HeadAdapter
from .fixed import (
    ACT,
    CHUNK_K,
    GATE,
    MATMUL_BITS,
    RESID_BITS,
    W8,
    clamp,
    rshift,
    sigmoid,
    to_int,
)

LOGIT_BITS = 21              # coder logits are clamped to |l| < 2**21 * 2**-12 = 512 nats
THRESH_BITS = 16             # thresholds as round(t * 2**16)


class QLinear:
    """y = x W^T (+ b) on ACT-format rows, exact: int8 weights and int8 rows (fixed.py)."""

    def __init__(self, t: dict, name: str):
        q = t[name + ".q"]
        self.n_out, self.n_in = q.shape
        self.wt = np.ascontiguousarray(q.T.astype(np.float32))            # (in, out)
        self.wp = kernels.pack8(self.wt)                                   # for kernels.matmul8
        self.m = t[name + ".s"].astype(np.float64) / W8
        b = t.get(name + ".b")
        self.b = None if b is None else b.astype(np.int64)

    def apply(self, x8: np.ndarray, amax: np.ndarray, act_silu: bool = False) -> np.ndarray:
        """On rows already in int8 form (kernels.quant_rows / norm_quant)."""
        return kernels.linear8(x8, amax, self.wt, self.wp, self.m, self.b, act_silu)

    def __call__(self, x: np.ndarray, act_silu: bool = False) -> np.ndarray:
        return self.apply(*kernels.quant_rows(x), act_silu)


def threshold_q(t: float) -> int | None:
    """A confidence threshold as an integer of THRESH_BITS, None when it can never fire."""
    return None if t >= 1.0 else round(t * (1 << THRESH_BITS))


def distances(logits: np.ndarray) -> np.ndarray:
    """ACT-format logits (R, V) -> distances below the row maximum in 1/256 nat, capped."""
    d = rshift(logits.max(axis=1, keepdims=True) - logits, ACT - DIST_FRAC_BITS)
    return np.minimum(d, DIST_MAX)


def top_margin_at_least(logits: np.ndarray, thr: int, second: bool) -> np.ndarray:
    """(R,) bool: p1 - p2 (second=True) or p1 (second=False) of softmax(logits) >= thr / 2**16."""
    w = EXP_TABLE[distances(logits)]                                       # (R, V), max 2**30
    total = w.sum(axis=1)
    top = np.int64(1) << WEIGHT_BITS
    if second:
        w2 = np.partition(w, w.shape[1] - 2, axis=1)[:, -2]
        top = top - w2
    return (top << THRESH_BITS) >= thr * total


@dataclass
class State:
    """Everything one step carries to the next, for B streams (all int64 unless noted)."""

    t: int
    acc: list                 # per patch scale (B, C): sum of the current patch's embeddings
    last: list                # per patch scale (B, C): mean of the last complete patch
    conv: list                # per block (B, K-1, ch) int32
    ssm: list                 # per block (B, N, H, P) int32 in STATE format
    mods: dict                # per AdaLN block (6, C): shift/scale/gate, same for every stream
    kv: dict                  # per block (keys, values) (nh, G, dh) of the global tokens
    cascade: dict | None = None
    adapter: HeadAdapter | None = None     # online adaptation of the final head (adapt.py)


class Block:
    def __init__(self, t: dict, d, i: int):
        p = f"blocks.{i}."
        self.index, self.kind, self.d = i, d.kinds[i], d
        self.threads: int | None = None        # the mixer's threads; None: kernels.threads()
        self.ada = QLinear(t, p + "ada") if i in d.ada_blocks else None
        self.norm1 = None if self.ada else t[p + "norm1"].astype(np.int64)
        self.norm2 = None if self.ada else t[p + "norm2"].astype(np.int64)
        m = p + "mixer."
        self.in_proj = QLinear(t, m + "in_proj")
        self.conv_q = t[m + "conv.q"].astype(np.int64)                     # (ch, K)
        self.conv_taps = np.ascontiguousarray(self.conv_q.T)               # (K, ch)
        self.conv_s = t[m + "conv.s"].astype(np.float64)
        self.conv_b = t[m + "conv.b"].astype(np.int64)
        self.dt_bias = t[m + "dt_bias"].astype(np.int64)
        self.A = t[m + "A"].astype(np.int64)
        self.D = t[m + "D"].astype(np.int64)
        self.norm = t[m + "norm"].astype(np.int64)
        self.out_proj = QLinear(t, m + "out_proj")
        self.xattn = None
        if d.cross_attn:
            x = p + "xattn."
            self.xattn = (t[x + "norm"].astype(np.int64),
                          *(QLinear(t, x + part) for part in ("q", "k", "v", "o")))
        f = p + "ffn."
        if self.kind == "D":
            self.w1, self.w2 = QLinear(t, f + "w1"), QLinear(t, f + "w2")
        else:
            self.router = QLinear(t, f + "router")
            self.moe_bias = t[f + "bias"].astype(np.int64)
            self.shared = ((QLinear(t, f + "shared.w1"), QLinear(t, f + "shared.w2"))
                           if d.n_shared else None)
            experts = [(QLinear(t, f + f"experts.{e}.w1"), QLinear(t, f + f"experts.{e}.w2"))
                       for e in range(d.n_routed)]
            batched = max(d.d_model, d.d_ff) <= CHUNK_K
            self.experts = None if batched else experts
            self.w1t = np.stack([w1.wt for w1, _ in experts])              # (X, C, F)
            self.w2t = np.stack([w2.wt for _, w2 in experts])              # (X, F, C)
            self.w1p, self.w2p = kernels.pack8(self.w1t), kernels.pack8(self.w2t)
            self.m1 = np.stack([w1.m for w1, _ in experts])                # (X, F)
            self.m2 = np.stack([w2.m for _, w2 in experts])                # (X, C)
        self.mod_router = QLinear(t, p + "router") if d.mod_blocks[i] else None
        self.plan = kernels.block_plan(self)   # the whole step in one compiled call, when it can

    # -- pieces ------------------------------------------------------------------------------------
    def route_score(self, h: np.ndarray) -> np.ndarray:
        """MoD score r (B,) in ACT format; the block processes a byte when r > 0."""
        return self.mod_router.apply(*kernels.norm_quant(h))[:, 0]

    def _norm_q(self, x, mod, which: int):
        """The block's norm before the mixer (0) or the FFN (1), as int8 rows."""
        if mod is None:
            return kernels.norm_quant(x, self.norm1 if which == 0 else self.norm2)
        return kernels.norm_quant(x, mod=(mod[3 * which], mod[3 * which + 1]))

    @staticmethod
    def _gate(y, mod, which: int):
        return y if mod is None else rshift(clamp(y, RESID_BITS) * mod[3 * which + 2], ACT)

    def _ffn(self, x8: np.ndarray, amax: np.ndarray) -> np.ndarray:
        if self.kind == "D":
            return self.w2(self.w1.apply(x8, amax, act_silu=True))
        return self._moe(x8, amax)

    def _moe(self, x8: np.ndarray, amax: np.ndarray) -> np.ndarray:
        """Routed experts (top-k of sigmoid score + balancing bias, ties to the lower index), gates
        normalised over the chosen experts in Q15, plus the shared experts. The experts run as
        one batch: each expert's rows padded to the busiest expert's count (padding rows are
        zeros and are dropped)."""
        R, k, X = len(x8), self.d.top_k, self.d.n_routed
        s = sigmoid(self.router.apply(x8, amax))                           # (R, X) GATE
        chosen, gate, rank, counts = kernels.moe_route(s, self.moe_bias, k)
        if self.experts is not None:                  # products too long for one float32 sum
            y = np.zeros((R, self.d.d_model), dtype=np.int64)
            src = np.arange(R * k) // k
            slots = chosen.reshape(-1)
            for e, (w1, w2) in enumerate(self.experts):
                hit = slots == e
                if hit.any():
                    ye = w2(w1.apply(x8[src[hit]], amax[src[hit]], act_silu=True))
                    np.add.at(y, src[hit], rshift(ye * gate.reshape(-1)[hit, None], 15))
            return y + (self._shared(x8, amax) if self.shared is not None else 0)
        cap = max(1, int(counts.max(initial=0)))
        xin, ain = kernels.moe_pack(x8, amax, chosen, rank, X, cap)
        h = kernels.requant(kernels.bmatmul8(xin, self.w1t, self.w1p), ain, self.m1, None,
                            act_silu=True)
        h8, hamax = kernels.quant_rows(h.reshape(X * cap, -1))
        ye = kernels.requant(kernels.bmatmul8(h8.reshape(X, cap, -1), self.w2t, self.w2p),
                             hamax.reshape(X, cap, 1), self.m2, None)      # (X, cap, C)
        y = kernels.moe_combine(ye, chosen, rank, gate)
        return y + (self._shared(x8, amax) if self.shared is not None else 0)

    def _shared(self, x8, amax):
        w1, w2 = self.shared
        return w2(w1.apply(x8, amax, act_silu=True))

    def mixer_step(self, x8, amax, conv: np.ndarray, ssm: np.ndarray, rows) -> np.ndarray:
        """Normalised rows (int8 form) -> (R, C); conv (B, K-1, ch) and ssm (B, N, H, P) are
        updated in place at rows."""
        acc = kernels.matmul8(x8, self.in_proj.wt, self.in_proj.wp)
        g = kernels.mixer_core(acc, amax, self, conv, ssm, rows)
        return self.out_proj.apply(*kernels.norm_quant(g, self.norm))

    def advance(self, h, alive, conv, ssm, mod, kv) -> None:
        """The block's turn in a step, h (B, C) updated in place: the rows still alive (a MoD
        block: those of them whose router score r > 0) go through the block, their residual
        gated by sigmoid(r) in a MoD block. One compiled call when the block has a plan."""
        if kernels.block_apply(self.plan, h, conv, ssm, alive, mod, self.threads) is not None:
            return
        process, gate = alive, None
        if self.mod_router is not None:
            r = self.route_score(h)
            process = alive & (r > 0)
            gate = sigmoid(r)                                                 # GATE
        rows = np.flatnonzero(process)
        if len(rows):
            delta = self.step(h[rows], conv, ssm, rows, mod, kv)
            if gate is not None:
                delta = rshift(delta * gate[rows, None], GATE)
            h[rows] = clamp(h[rows] + delta, RESID_BITS)

    def step(self, x, conv, ssm, rows, mod, kv):
        """x (R, C) -> delta (R, C) (see umoec/model/block.py for the data flow)."""
        delta = self._gate(self.mixer_step(*self._norm_q(x, mod, 0), conv, ssm, rows), mod, 0)
        if self.xattn is not None:
            delta = delta + cross_attention(self.xattn, clamp(x + delta, RESID_BITS), kv)
        y = self._ffn(*self._norm_q(clamp(x + delta, RESID_BITS), mod, 1))
        return clamp(delta + self._gate(y, mod, 1), RESID_BITS)


def cross_attention(parts, x: np.ndarray, kv) -> np.ndarray:
    """Attend from x (R, C) to the global tokens' keys/values (nh, G, dh) -> (R, C)."""
    norm, q_lin, _, _, o_lin = parts
    k, v = kv
    nh, G, dh = k.shape
    q = q_lin.apply(*kernels.norm_quant(x, norm)).reshape(len(x), nh, dh)   # (R, nh, dh)
    scores = np.einsum("rnd,ngd->rng", clamp(q, MATMUL_BITS), clamp(k, MATMUL_BITS))  # ACT^2
    # / sqrt(dh) as an exact rescale: scores in ACT after dividing by 2**ACT * sqrt(dh)
    logits = to_int(scores.astype(np.float64) / (float(1 << ACT) * np.sqrt(float(dh))))
    logits = clamp(logits, RESID_BITS).reshape(-1, G)
    w = EXP_TABLE[np.minimum(rshift(logits.max(axis=1, keepdims=True) - logits,
                                    ACT - DIST_FRAC_BITS), DIST_MAX)]      # (R*nh, G) Q30
    att = (w << 15) // w.sum(axis=1, keepdims=True)                          # Q15
    att = att.reshape(len(x), nh, G)
    out = rshift(np.einsum("rng,ngd->rnd", att, v), 15).reshape(len(x), nh * dh)
    return o_lin(out)


class ExactModel:
    """Integer step form of a coding model's tensors + config (see the module docstring)."""

    def __init__(self, tensors: dict, cfg, *, exit_threshold: float | None = None,
                 cascade_threshold: float | None = None, adapt_rate: int = 0):
        d = self.d = dims(cfg)
        t = tensors
        self.cfg = cfg
        self.embed = t["embed.byte"].astype(np.int64)
        self.patch = [t[f"embed.patch.{i}"].astype(np.int64) for i in range(len(d.scales))]
        self.blocks = [Block(t, d, i) for i in range(len(d.kinds))]
        self.final_norm = t["heads.final_norm"].astype(np.int64)
        self.unembed = QLinear(t, "heads.unembed")
        self.head_plan = kernels.head_plan(self.unembed)      # None: exits in Python
        self.exit_norms = {b: t[f"heads.exit_norm.{b}"].astype(np.int64) for b in d.exit_blocks}
        self.globals = ((t["globals.weight"].astype(np.int64), t["globals.bias"].astype(np.int64))
                        if d.cross_attn else None)
        self.cascade = casc.CascadeMixer(t) if d.cascade else None
        et = cfg.early_exit.exit_threshold if exit_threshold is None else exit_threshold
        ct = cfg.cascade.threshold if cascade_threshold is None else cascade_threshold
        self.exit_thr, self.cascade_thr = threshold_q(et), threshold_q(ct)
        self.adapt_rate = int(adapt_rate)     # 0: no online adaptation (adapt.py)

    def set_threads(self, n: int | None) -> None:
        """Threads of the compiled SSM mixer for the next codings (None: kernels.threads(), the
        environment's count, read now: not at every step, where reading it cost ~5 us a block);
        a process that codes a slice of the streams beside others (split.py) runs one."""
        n = n or kernels.threads()
        for blk in self.blocks:
            blk.threads = n

    # -- conditioning ------------------------------------------------------------------------------
    @staticmethod
    def globals_q(g: np.ndarray | None, n: int) -> np.ndarray:
        """The float32 global vector (from the .umc header) in ACT format: one IEEE product."""
        if g is None:
            return np.zeros(n, dtype=np.int64)
        g = np.asarray(g, dtype=np.float32)
        if g.shape != (n,) or not np.isfinite(g).all():
            raise ValueError(f"the global vector must hold {n} finite values")
        return clamp(to_int(g.astype(np.float64) * (1 << ACT)), RESID_BITS)

    def init_state(self, batch: int, g: np.ndarray | None = None) -> State:
        d = self.d
        gq = self.globals_q(g, d.d_globals)
        mods, kv = {}, {}
        for blk in self.blocks:
            if blk.ada is not None:
                mods[blk.index] = clamp(blk.ada(gq[None, :])[0].reshape(6, d.d_model), RESID_BITS)
        if self.globals is not None:
            w, b = self.globals
            tokens = rshift(gq[:, None] * w, ACT) + b                           # (G, C)
            nh = d.xattn_heads
            for blk in self.blocks:
                _, _, k_lin, v_lin, _ = blk.xattn
                kv[blk.index] = tuple(lin(tokens).reshape(d.d_globals, nh, -1).transpose(1, 0, 2)
                                      .copy() for lin in (k_lin, v_lin))
        z = lambda *shape: np.zeros(shape, dtype=np.int64)  # noqa: E731
        return State(
            t=0, acc=[z(batch, d.d_model) for _ in d.scales],
            last=[z(batch, d.d_model) for _ in d.scales],
            conv=[np.zeros((batch, d.d_conv - 1, d.conv_channels), np.int32) for _ in self.blocks],
            ssm=[np.zeros((batch, d.d_state, d.n_heads, d.head_dim), np.int32)
                 for _ in self.blocks],
            mods=mods, kv=kv, cascade=casc.init_state(batch) if self.cascade else None,
            adapter=HeadAdapter(d.d_model, self.adapt_rate) if self.adapt_rate else None)

    # -- one step ----------------------------------------------------------------------------------
    def _embed(self, byte: np.ndarray, st: State) -> np.ndarray:
        h = self.embed[byte]
        for s, (P, table) in enumerate(zip(self.d.scales, self.patch, strict=True)):
            st.acc[s] = st.acc[s] + table[byte]
            if (st.t + 1) % P == 0:
                st.last[s] = (2 * st.acc[s] + P) // (2 * P)                 # round(acc / P)
                st.acc[s] = np.zeros_like(st.acc[s])
            h = h + st.last[s]
        return h

    def step(self, byte: np.ndarray, st: State) -> tuple[np.ndarray, State]:
        """byte (B,) int -> coder logits (B, V) int64 in ACT format; st updated in place."""
        byte = np.asarray(byte, dtype=np.int64)
        if st.adapter is not None:
            st.adapter.learn(byte)                  # the bytes coded at the step before
        return self.finish(*self.core(byte, st), st.adapter), st

    def core(self, byte: np.ndarray, st: State):
        """Everything of a step that is each stream's own (split.py runs it on a slice of the
        streams in another process): -> raw (B, V) int64, the logits before the adaptation's
        correction and the final clamp; final (B,) bool, the rows the final head codes; x8
        (B, C) the final norm's int8 rows when the model adapts (the adapter's features), else
        None."""
        byte = np.asarray(byte, dtype=np.int64)
        B = len(byte)
        h = self._embed(byte, st)
        alive = np.ones(B, dtype=bool)             # still in the model (not alone, not exited)
        alone = None
        if self.cascade is not None:
            alone_logits, boost, alone = self.cascade.step(byte, st.cascade, st.t, self.cascade_thr)
            alive = ~alone
        exits = []
        for blk in self.blocks:
            i = blk.index
            blk.advance(h, alive, st.conv[i], st.ssm[i], st.mods.get(i), st.kv.get(i))
            if blk.index in self.exit_norms and self.exit_thr is not None and alive.any():
                exits.append(self._exit(h, alive, self.exit_norms[blk.index]))
        x8 = None
        if self.adapt_rate:                         # the adapter reads every stream's rows
            x8, amax = kernels.norm_quant(h, self.final_norm)
            logits = self.unembed.apply(x8, amax)
        else:                                       # the final head only where it is used
            logits = np.zeros((B, VOCAB), np.int64)
            live = np.flatnonzero(alive)
            if len(live):
                logits[live] = self.unembed.apply(*kernels.norm_quant(h[live], self.final_norm))
        for rows_left, le in exits:
            logits[rows_left] = le
        if self.cascade is not None:
            logits = logits + boost
            if alone.any():
                logits[alone] = alone_logits[alone]
        st.t += 1
        return logits, alive, x8

    def _exit(self, h: np.ndarray, alive: np.ndarray, norm: np.ndarray):
        """The rows still alive whose exit head is confident leave here (alive cleared) ->
        (their rows, their exit head's logits). One compiled call when it can run."""
        out = kernels.exit_apply(self.head_plan, h, alive, norm, self.exit_thr)
        if out is not None:
            return out
        live = np.flatnonzero(alive)                # only bytes still in the model may leave
        le = self.unembed.apply(*kernels.norm_quant(h[live], norm))
        go = kernels.top_margin(le, self.exit_thr, second=True)
        alive[live[go]] = False
        return live[go], le[go]

    @staticmethod
    def finish(raw: np.ndarray, final: np.ndarray, x8, adapter: HeadAdapter | None) -> np.ndarray:
        """core's results (of every stream) -> the coder's logits: the adaptation's correction
        on the rows of the final head, then the clamp; the adapter remembers them to learn."""
        logits, feats = ExactModel.correct(raw, final, x8, adapter)
        if adapter is not None:
            adapter.remember(feats, logits, final)
        return logits

    @staticmethod
    def correct(raw: np.ndarray, final: np.ndarray, x8, adapter: HeadAdapter | None):
        """finish without remembering, on any rows (each row's own: a slice of the streams
        gives that slice of finish's logits) -> (logits, the adapter's features or None)."""
        if adapter is None:
            return clamp(raw, LOGIT_BITS), None
        feats = adapter.features(x8)
        return adapter.corrected(feats, raw, final, LOGIT_BITS), feats


__all__ = ["ExactModel", "QLinear", "State", "distances", "threshold_q", "top_margin_at_least"]
