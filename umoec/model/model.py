"""The u-moec-tiny byte model: parallel training form and the recurrent step form the codec runs.

Glossary
  B  batch (streams)   T  time (bytes)   C  d_model   V  256 bytes   G  d_globals
  alive (B, T)  bytes the big model still works on: not coded by the cascade alone, not exited
  process       bytes a block runs on: alive, and (MoD blocks) chosen by the router

Data flow for one byte x_t (both forms compute exactly this):
  h = byte embedding + patch embeddings                               embed.py
  cascade statistics -> alone logits, boost, confidence               cascade.py
  alive = confidence < cascade.threshold
  for each block i:                                                   block.py
      process = alive [& router choice: top-capacity (train) / r > 0 (infer) on MoD blocks]
      h = h + [sigmoid(r) *] delta_i(h)  on processed bytes; skipped bytes keep h and the
          block's recurrent state
      after an exit block: bytes with p1 - p2 >= exit_threshold leave (alive = False) and take
          that exit head's logits; later blocks skip them
  model logits = final head, or the exit head a byte left at
  coder logits = cascade alone ? alone logits : log_softmax(model logits) + boost

`mode="infer"` (the default in eval()) applies exactly the step form's rules, so the parallel
form of an eval()'d model is the fast way to measure what the codec will get. `mode="train"`
(default in train()) differs only in MoD blocks choosing the top ceil(capacity * T) scores of
each sequence; exits and the cascade are simulated the same way in both modes.
"""
from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F

from ..sizing import dims
from .block import Block
from .cascade import Cascade
from .conditioning import GlobalTokens
from .embed import ByteEmbedding
from .heads import Heads, confidence
from .layers import Linear, LoraSeeds
from .losses import CASCADE_LOSS_WEIGHT, MOD_AUX_WEIGHT, cross_entropy, mtp_weights, shifted_targets
from .output import ModelOutput
from .routing import compact, gather_rows, gather_values, mod_topk, scatter_rows
from .state import ModelState


class UMoEModel(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        d = self.dims = dims(cfg)
        self.capacity = cfg.mod.capacity
        self.exit_threshold = cfg.early_exit.exit_threshold
        self.exit_loss_weight = cfg.early_exit.exit_loss_weight
        self.cascade_threshold = cfg.cascade.threshold
        self.ce_weight, self.mtp_loss_weight = cfg.loss.ce_weight, cfg.loss.mtp_weight
        self.mtp_w = mtp_weights(d.n_mtp, cfg.patches.mtp_weight)
        self.bias_lr = cfg.moe.bias_lr
        self.context_len = cfg.model.context_len
        lora = LoraSeeds(cfg.lora.rank, cfg.lora.alpha, cfg.lora.enabled, d.lora_all)
        self.embed = ByteEmbedding(d.d_model, d.scales)
        self.globals = GlobalTokens(d.d_globals, d.d_model) if d.cross_attn else None
        self.blocks = nn.ModuleList(Block(d, i, lora) for i in range(len(d.kinds)))
        self.heads = Heads(d)
        self.cascade = Cascade(d.cascade_hidden) if d.cascade else None

    # -- conditioning ------------------------------------------------------------------------------
    def _globals(self, g, batch: int) -> torch.Tensor:
        like = self.heads.unembed.weight
        if g is None:
            return like.new_zeros(batch, self.dims.d_globals)
        if tuple(g.shape) != (batch, self.dims.d_globals):
            raise ValueError(f"g must have shape ({batch}, {self.dims.d_globals}), got "
                             f"{tuple(g.shape)}")
        return g.to(like)

    def _conditioning(self, g: torch.Tensor) -> tuple[dict, dict]:
        mods = {b.index: b.ada(g) for b in self.blocks if b.ada is not None}   # (B, 6, C)
        kv = {}
        if self.globals is not None:
            tokens = self.globals(g)                                            # (B, G, C)
            kv = {b.index: b.xattn.kv(tokens) for b in self.blocks}
        return mods, kv

    # -- parallel form -----------------------------------------------------------------------------
    def forward(self, x: torch.Tensor, g: torch.Tensor | None = None,
                targets: torch.Tensor | None = None, return_hidden: bool = False,
                mode: str | None = None) -> ModelOutput:
        """x (B, T) bytes -> ModelOutput; see the module docstring for the rules."""
        mode = mode or ("train" if self.training else "infer")
        if mode not in ("train", "infer"):
            raise ValueError(f"mode must be 'train' or 'infer', got {mode!r}")
        B, T = x.shape
        if mode == "train" and self.context_len < T:
            raise ValueError(f"training sequence of {T} bytes is longer than model.context_len="
                             f"{self.context_len} (mode='infer' and the step form have no limit)")
        n = float(B * T)
        mods, kvs = self._conditioning(self._globals(g, B))
        h = self.embed(x)                                                       # (B, T, C)
        out = ModelOutput(logits=h, mode=mode, hidden=[] if return_hidden else None)
        alive = torch.ones(B, T, dtype=torch.bool, device=x.device)
        casc = None
        if self.cascade is not None:
            casc = self.cascade(x, h.dtype)                    # alone (B,T,V), boost, conf (B,T)
            alone = casc[2] >= self.cascade_threshold
            alive = ~alone
            out.cascade_fraction = alone.sum().item() / n
        exits = []                                             # (block, logits, leave mask)
        for blk in self.blocks:
            i = blk.index
            process, gate = alive, None
            if blk.router is not None:
                r = blk.route_score(h)                                          # (B, T)
                chosen = mod_topk(r, alive, self.capacity)
                causal = alive & (r.detach() > 0)
                process = chosen if mode == "train" else causal
                gate = torch.sigmoid(r)
                if targets is not None:  # BCE over live bytes (no data-dependent shapes)
                    live = alive.to(r.dtype)
                    out.aux_losses[f"mod_{i}"] = F.binary_cross_entropy_with_logits(
                        r, chosen.to(r.dtype), weight=live, reduction="sum") / live.sum().clamp(
                        min=1)
                out.mod_fraction[i] = process.sum().item() / n
                out.mod_fraction_inference[i] = causal.sum().item() / n
            h, counts = self._run_block(blk, h, process, gate, mods.get(i), kvs.get(i))
            if counts is not None:
                out.moe_load[i] = counts / counts.sum().clamp(min=1)
                out.moe_bias[i] = blk.ffn.bias.detach().clone()
            if out.hidden is not None:
                out.hidden.append(h)
            if str(i) in self.heads.exit_norms:
                le = self.heads.exit(i, h)                                      # (B, T, V)
                leave = alive & (confidence(le) >= self.exit_threshold)
                exits.append((i, le, leave))
                alive = alive & ~leave
                out.exit_fraction[i] = leave.sum().item() / n
        out.logits = self._compose(self.heads.final(h), [(le, lv) for _, le, lv in exits],
                                   casc, alone if casc is not None else None)
        if targets is not None:
            self._losses(out, h, targets, exits, casc, alive)
        return out

    @staticmethod
    def _compose(logits, exits, casc, alone):
        """Coder logits from the final head, the exits taken and the cascade (both forms)."""
        for le, leave in exits:
            if bool(leave.any()):
                logits = torch.where(leave.unsqueeze(-1), le, logits)
        if casc is None:
            return logits
        mixed = F.log_softmax(logits, dim=-1) + casc[1]
        return torch.where(alone.unsqueeze(-1), casc[0], mixed) if bool(alone.any()) else mixed

    def _run_block(self, blk: Block, h, process, gate, mod, kv):
        """h (B, T, C) after block blk on the bytes in process (B, T); -> (h, MoE counts)."""
        if bool(process.all()):
            delta, counts = blk(h, mod, kv)
            return h + (delta if gate is None else gate.unsqueeze(-1) * delta), counts
        if not bool(process.any()):
            return h, (h.new_zeros(self.dims.n_routed) if blk.kind == "S" else None)
        return self._run_compacted(blk, h, process, gate, mod, kv)

    @torch.compiler.disable  # data-dependent lengths: eager even inside torch.compile(model)
    def _run_compacted(self, blk: Block, h, process, gate, mod, kv):
        idx, valid = compact(process)                                           # (B, Tm)
        hc = gather_rows(h, idx)                                                # (B, Tm, C)
        delta, counts = blk(hc, mod, kv, valid)
        if gate is not None:
            delta = gather_values(gate, idx).unsqueeze(-1) * delta
        return scatter_rows(h, idx, hc + delta), counts

    def _losses(self, out: ModelOutput, h, targets, exits, casc, alive) -> None:
        hl = out.head_losses
        hl["final"] = cross_entropy(out.logits, targets)
        loss = self.ce_weight * hl["final"]
        for b, le, _ in exits:
            hl[f"exit_{b}"] = cross_entropy(le, targets)
            loss = loss + self.exit_loss_weight * hl[f"exit_{b}"]
        if self.dims.n_mtp:
            mtp = 0.0
            for k, w in enumerate(self.mtp_w, start=1):
                hl[f"mtp_{k}"] = cross_entropy(self.heads.mtp_logits(k, h),
                                               shifted_targets(targets, k, alive))
                mtp = mtp + w * hl[f"mtp_{k}"]
            loss = loss + self.mtp_loss_weight * mtp
        if casc is not None:
            hl["cascade"] = cross_entropy(casc[0], targets)
            loss = loss + CASCADE_LOSS_WEIGHT * hl["cascade"]
        if out.aux_losses:
            aux = torch.stack(list(out.aux_losses.values())).mean()
            loss = loss + MOD_AUX_WEIGHT * aux
        out.loss = loss

    # -- recurrent form ----------------------------------------------------------------------------
    @torch.no_grad()
    def init_state(self, batch_size: int, g: torch.Tensor | None = None) -> ModelState:
        """Empty state of batch_size streams conditioned on g (B, d_globals) or zeros."""
        like = self.heads.unembed.weight
        mods, kv = self._conditioning(self._globals(g, batch_size))
        pairs = [b.mixer.init_state(batch_size, like) for b in self.blocks]
        return ModelState(
            t=0, embed=self.embed.init_state(batch_size, like), conv=[c for c, _ in pairs],
            ssm=[s for _, s in pairs], mods=mods, kv=kv,
            cascade=(Cascade.init_state(batch_size, like.device)
                     if self.cascade is not None else None))

    @torch.no_grad()
    def step(self, byte: torch.Tensor, state: ModelState) -> tuple[torch.Tensor, ModelState]:
        """byte (B,) -> logits (B, V) for the next byte; updates state in place and returns it."""
        t = state.t
        h = self.embed.step(byte, state.embed, t)                               # (B, C)
        alive = torch.ones(h.shape[0], dtype=torch.bool, device=h.device)
        casc = None
        if self.cascade is not None:
            casc = self.cascade.step(byte, state.cascade, t, h.dtype)
            alone = casc[2] >= self.cascade_threshold
            alive = ~alone
        exits = []
        for blk in self.blocks:
            process, gate = alive, None
            if blk.router is not None:
                r = blk.route_score(h)                                          # (B,)
                process = alive & (r > 0)
                gate = torch.sigmoid(r)
            h = self._step_block(blk, h, process, gate, state)
            if str(blk.index) in self.heads.exit_norms:
                le = self.heads.exit(blk.index, h)
                leave = alive & (confidence(le) >= self.exit_threshold)
                exits.append((le, leave))
                alive = alive & ~leave
        logits = self._compose(self.heads.final(h), exits, casc,
                               alone if casc is not None else None)
        state.t = t + 1
        return logits, state

    def _step_block(self, blk: Block, h, process, gate, state: ModelState):
        i = blk.index
        mod, kv = state.mods.get(i), state.kv.get(i)
        n = int(process.sum())
        if n == h.shape[0]:
            delta, state.conv[i] = blk.step(h, state.conv[i], state.ssm[i], mod, kv)
            return h + (delta if gate is None else gate.unsqueeze(-1) * delta)
        if n == 0:
            return h
        idx = process.nonzero().squeeze(1)

        def sub(v):
            return None if v is None else v.index_select(0, idx)

        delta, _ = blk.step(sub(h), state.conv[i], state.ssm[i], sub(mod),
                            None if kv is None else (sub(kv[0]), sub(kv[1])), rows=idx)
        hs = sub(h) + (delta if gate is None else sub(gate).unsqueeze(-1) * delta)
        return h.index_copy(0, idx, hs)

    # -- training helpers --------------------------------------------------------------------------
    @torch.no_grad()
    def update_balancing_bias(self, out: ModelOutput) -> None:
        """After optimizer.step(): b_i += moe.bias_lr * sign(mean load - load_i), every MoE block."""
        for i, load in out.moe_load.items():
            self.blocks[i].ffn.update_bias(load, self.bias_lr)

    def param_groups(self) -> tuple[list, list, list]:
        """(Muon: 2-D hidden weights, AdamW with decay, AdamW without decay); LoRA excluded."""
        muon = []
        for blk in self.blocks:
            muon += [blk.mixer.in_proj.weight, blk.mixer.out_proj.weight]
            ffns = [blk.ffn] if blk.kind == "D" else [*blk.ffn.experts] + (
                [blk.ffn.shared] if blk.ffn.shared is not None else [])
            for f in ffns:
                muon += [f.w1.weight, f.w2.weight]
            if blk.xattn is not None:
                muon += [blk.xattn.q.weight, blk.xattn.k.weight, blk.xattn.v.weight,
                         blk.xattn.o.weight]
        muon += [m.proj.weight for m in self.heads.mtp]
        muon_ids = {id(p) for p in muon}
        decay, no_decay = [], []
        for name, p in self.named_parameters():
            if "lora_" in name or id(p) in muon_ids:
                continue
            (no_decay if p.ndim < 2 or name.endswith("bias") else decay).append(p)
        return muon, decay, no_decay

    # -- LoRA --------------------------------------------------------------------------------------
    def _adapted(self) -> list[Linear]:
        return [m for m in self.modules() if isinstance(m, Linear) and m.lora_rank]

    def lora_parameters(self) -> list[nn.Parameter]:
        """Adapter factors A and B of every adapted layer (empty when lora.enabled is off)."""
        return [p for m in self._adapted() for p in (m.lora_A, m.lora_B)]

    def set_lora(self, enabled: bool) -> None:
        """Switch every adapter's contribution on or off (they start off)."""
        for m in self._adapted():
            m.lora_on = bool(enabled)

    def reset_lora(self) -> None:
        """Adapters back to their seeded start (B = 0), identically in encoder and decoder."""
        for m in self._adapted():
            m.reset_lora()


def build_model(cfg) -> UMoEModel:
    """The model for a checked Config: fp32, initialised from torch's global RNG."""
    from ..config import ConfigError, cross_check
    issues = cross_check(cfg)
    if issues:
        raise ConfigError(issues)
    return UMoEModel(cfg)
