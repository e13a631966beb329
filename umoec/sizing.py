"""Model sizes from a config, without torch: parameters, active parameters, FLOPs, memory.

The cockpit imports this module to show sizes while a config is edited, so it must never import
torch. The model (`umoec.model`) builds its layers from the same `Dims`, and a test checks that
`total_params(cfg) == sum(p.numel() for p in build_model(cfg).parameters())` for every tier and
every switch, so the two cannot drift apart.

Glossary
  C  d_model            residual width          E  d_inner = EXPAND * C   SSM inner width
  H  n_heads = E / P    SSM heads               P  head_dim               channels per SSM head
  N  d_state            SSM state per channel   K  d_conv                 causal conv width
  F  d_ff               one expert's width      X  n_routed               routed experts
  G  d_globals          global values           L  SSD_CHUNK              scan chunk length
"""
from __future__ import annotations

from dataclasses import dataclass

# -- architecture constants (not config fields; changing one changes every checkpoint) --------
EXPAND = 2              # E = EXPAND * C (Mamba's expand factor)
HEAD_DIMS = (64, 32, 16)  # P: the first of these that divides E (else one head of width E)
SSD_CHUNK = 32          # L: chunk length of the parallel (SSD) scan
VOCAB = 256             # bytes
XATTN_HEAD_DIM = 64     # cross-attention head width (one head when d_model < 64)
CASCADE_ORDERS = (1, 2, 3)          # byte-context orders of the cascade's tables
# mixer inputs: per order (has a prediction, run length, occurrences) + one per pair of orders
# (do their predictions agree)
CASCADE_FEATURES = 3 * len(CASCADE_ORDERS) + len(CASCADE_ORDERS) * (len(CASCADE_ORDERS) - 1) // 2
CASCADE_HASH_BITS = 14  # buckets per hashed order (orders >= 2) = 2**bits; order 1 is exact
CASCADE_CAP = 255       # saturation of the integer run / occurrence counters
FLOAT_BYTES = 4


@dataclass(frozen=True)
class Dims:
    """Every size the model is built from, derived from a Config (one place, no torch)."""

    d_model: int
    d_inner: int
    n_heads: int
    head_dim: int
    d_state: int
    d_conv: int
    conv_channels: int      # E + 2N: x, B and C go through the causal conv
    in_proj_out: int        # 2E + 2N + H: z, xBC, dt
    kinds: str              # one letter per block, upper case: "S" or "D"
    mod_blocks: tuple       # per block: True where Mixture-of-Depths routes it
    n_routed: int
    n_shared: int
    top_k: int
    d_ff: int
    d_ff_dense: int         # d_ff * (top_k + n_shared)
    d_ff_shared: int        # d_ff * n_shared (all shared experts as one FFN)
    ada_blocks: tuple
    cross_attn: bool
    xattn_heads: int
    d_globals: int
    exit_blocks: tuple
    n_mtp: int              # extra heads predicting bytes t+2 .. t+1+n_mtp
    scales: tuple
    cascade: bool
    cascade_hidden: int
    lora: bool
    lora_rank: int
    lora_all: bool


def dims(cfg) -> Dims:
    m, moe = cfg.model, cfg.moe
    c = m.d_model
    e = EXPAND * c
    head_dim = next((p for p in HEAD_DIMS if e % p == 0), e)
    n_heads = e // head_dim
    pattern = (m.block_pattern * m.n_blocks)[:m.n_blocks]
    xattn_heads = max(1, c // XATTN_HEAD_DIM) if c % XATTN_HEAD_DIM == 0 else 1
    return Dims(
        d_model=c, d_inner=e, n_heads=n_heads, head_dim=head_dim, d_state=m.d_state,
        d_conv=m.d_conv, conv_channels=e + 2 * m.d_state,
        in_proj_out=2 * e + 2 * m.d_state + n_heads,
        kinds=pattern.upper(), mod_blocks=tuple(cfg.mod.enabled and ch.islower() for ch in pattern),
        n_routed=moe.n_routed, n_shared=moe.n_shared, top_k=moe.top_k, d_ff=moe.d_ff,
        d_ff_dense=moe.d_ff * (moe.top_k + moe.n_shared), d_ff_shared=moe.d_ff * moe.n_shared,
        ada_blocks=tuple(cfg.conditioning.ada_ln_blocks) if cfg.conditioning.ada_ln_zero else (),
        cross_attn=cfg.conditioning.cross_attn, xattn_heads=xattn_heads,
        d_globals=cfg.head.d_globals,
        exit_blocks=tuple(cfg.early_exit.blocks) if cfg.early_exit.enabled else (),
        n_mtp=cfg.patches.primary - 1 if cfg.patches.multi_token_predict else 0,
        scales=tuple(cfg.patches.scales), cascade=cfg.cascade.enabled,
        cascade_hidden=cfg.cascade.d_hidden, lora=cfg.lora.enabled, lora_rank=cfg.lora.rank,
        lora_all=cfg.lora.target == "all")


# -- parameter counts --------------------------------------------------------------------------
def _lora(d: Dims, n_in: int, n_out: int, routed: bool) -> int:
    """Adapter parameters of one n_in -> n_out matrix (A: r x in, B: out x r), if it gets one."""
    if not d.lora or not (routed or d.lora_all):
        return 0
    return d.lora_rank * (n_in + n_out)


def mixer_params(d: Dims) -> int:
    c, e = d.d_model, d.d_inner
    return (c * d.in_proj_out + _lora(d, c, d.in_proj_out, False)          # in_proj
            + d.conv_channels * d.d_conv + d.conv_channels                  # depthwise conv
            + 3 * d.n_heads                                                 # dt_bias, A_log, D
            + e                                                             # gated RMSNorm
            + e * c + _lora(d, e, c, False))                                # out_proj


def ffn_params(d: Dims, width: int, routed: bool = False) -> int:
    """A two-matrix FFN C -> width -> C (no biases) with its adapters."""
    c = d.d_model
    return 2 * c * width + _lora(d, c, width, routed) + _lora(d, width, c, routed)


def block_params(cfg, i: int, d: Dims | None = None) -> dict[str, int]:
    """Parameters of block i by part: norms, ada, mixer, xattn, ffn (all experts), mod_router."""
    d = d or dims(cfg)
    c = d.d_model
    out = {"norms": 0, "ada": 0, "mixer": mixer_params(d), "xattn": 0, "ffn": 0, "mod_router": 0}
    if i in d.ada_blocks:
        out["ada"] = d.d_globals * 6 * c + 6 * c          # Linear(G, 6C) with bias
    else:
        out["norms"] = 2 * c                                # two RMSNorm weights
    if d.cross_attn:
        out["xattn"] = c + 4 * (c * c + _lora(d, c, c, False))
    if d.kinds[i] == "D":
        out["ffn"] = ffn_params(d, d.d_ff_dense)
    else:
        out["ffn"] = (d.n_routed * c                                       # router
                      + (ffn_params(d, d.d_ff_shared) if d.n_shared else 0)
                      + d.n_routed * ffn_params(d, d.d_ff, routed=True))
    if d.mod_blocks[i]:
        out["mod_router"] = c + 1
    return out


def param_breakdown(cfg) -> dict[str, int]:
    """Total parameters by component (sums to total_params)."""
    d = dims(cfg)
    c = d.d_model
    out = {"embedding": VOCAB * c, "patches": len(d.scales) * VOCAB * c}
    for i in range(len(d.kinds)):
        out[f"block_{i}"] = sum(block_params(cfg, i, d).values())
    out["globals"] = 2 * d.d_globals * c if d.cross_attn else 0
    out["head"] = c + c * VOCAB + len(d.exit_blocks) * c + d.n_mtp * (c * c + c)
    n_out = 2 * len(CASCADE_ORDERS)
    out["cascade"] = ((CASCADE_FEATURES * d.cascade_hidden + d.cascade_hidden
                       + d.cascade_hidden * n_out + n_out) if d.cascade else 0)
    return out


def total_params(cfg) -> int:
    """All parameters, every expert included (== sum(p.numel()) of the built model)."""
    return sum(param_breakdown(cfg).values())


param_count = total_params


def active_params_per_byte(cfg) -> float:
    """Parameters one byte touches on average in training: top_k of n_routed experts, MoD blocks
    weighted by mod.capacity; embeddings count as one row, LoRA and MTP heads excluded."""
    d = dims(cfg)
    c = d.d_model
    total = float(c + len(d.scales) * c + c + c * VOCAB)     # embedding rows + final head
    for i in range(len(d.kinds)):
        p = block_params(cfg, i, d)
        if d.kinds[i] == "S":
            p["ffn"] = (d.n_routed * c + (ffn_params(d, d.d_ff_shared) if d.n_shared else 0)
                        + d.top_k * ffn_params(d, d.d_ff, routed=True))
        share = cfg.mod.capacity if d.mod_blocks[i] else 1.0
        total += share * sum(v for k, v in p.items() if k != "mod_router") + p["mod_router"]
    return total


active_params = active_params_per_byte


def _matmul_params_per_byte(cfg) -> float:
    """Weights multiplied per byte in the forward pass (norm and bias vectors left out)."""
    d = dims(cfg)
    c = d.d_model
    total = float(c * VOCAB * (1 + len(d.exit_blocks)) + d.n_mtp * (c * c + c * VOCAB))
    for i in range(len(d.kinds)):
        w = c * d.in_proj_out + d.d_inner * c + (4 * c * c if d.cross_attn else 0)
        if d.kinds[i] == "D":
            w += 2 * c * d.d_ff_dense
        else:
            w += d.n_routed * c + 2 * c * (d.d_ff_shared + d.top_k * d.d_ff)
        total += (cfg.mod.capacity if d.mod_blocks[i] else 1.0) * w
    return total


def flops_per_byte(cfg, training: bool = True) -> float:
    """Forward FLOPs per byte (x3 for training: forward + backward), matmuls and the SSD scan."""
    d = dims(cfg)
    L = min(SSD_CHUNK, cfg.training.seq_len)
    scan = 0.0
    for i in range(len(d.kinds)):
        # intra-chunk C.B^T (L*N) and its application (L*E), chunk states and outputs (2*E*N)
        per = 2 * (L * d.d_state + L * d.d_inner + 2 * d.d_inner * d.d_state)
        scan += (cfg.mod.capacity if d.mod_blocks[i] else 1.0) * per
    fwd = 2 * _matmul_params_per_byte(cfg) + scan
    return 3 * fwd if training else fwd


def tokens_per_step(cfg) -> int:
    """Bytes per optimizer step per process (batch_size x seq_len)."""
    return cfg.training.batch_size * cfg.training.seq_len


def training_memory_bytes(cfg) -> int:
    """Rough training memory per process: fp32 weights + grads + optimizer state (Muon 1, AdamW
    2 slots) + saved activations (a per-byte estimate of what autograd keeps), in bytes."""
    d = dims(cfg)
    n = total_params(cfg)
    muon = 0
    for i in range(len(d.kinds)):
        b = block_params(cfg, i, d)
        muon += b["mixer"] - d.conv_channels * (d.d_conv + 1) - 3 * d.n_heads - d.d_inner
        muon += b["ffn"] - (d.n_routed * d.d_model if d.kinds[i] == "S" else 0)
        muon += max(0, b["xattn"] - d.d_model)
    states = n * 2 + (n - muon) * 2 + muon * 1                # weights, grads, optimizer slots
    c, e = d.d_model, d.d_inner
    L = min(SSD_CHUNK, cfg.training.seq_len)
    per_block = (6 * c + 2 * d.in_proj_out + 3 * e + d.n_heads * L * 2
                 + 2 * (d.top_k + d.n_shared) * d.d_ff + d.n_routed)
    per_byte = len(d.kinds) * per_block + VOCAB * (3 + len(d.exit_blocks) + d.n_mtp)
    acts = tokens_per_step(cfg) * per_byte
    return int((states + acts) * FLOAT_BYTES)

