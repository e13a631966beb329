"""What the Architecture tab draws: the configured model as parts with their sizes (pure, no torch).
Every count comes from `umoec.sizing`; only each block's share of the active parameters is computed
here (`block_active`, by sizing's rule), and a test checks that the shares add up to its total."""
from __future__ import annotations

from dataclasses import dataclass

from umoec import sizing
from umoec.config import Config

# sizing.block_params parts, in the order the table shows them
BLOCK_PARTS = ("norms", "ada", "mixer", "xattn", "ffn", "mod_router")


@dataclass(frozen=True)
class BlockView:
    index: int
    letter: str                 # as written in block_pattern (lower case: MoD may skip it)
    moe: bool                   # "S": MoE FFN; "D": dense FFN
    mod: bool                   # routed by Mixture-of-Depths (lower case and mod.enabled)
    exit_head: bool             # an early-exit head reads this block's output
    ada: bool                   # AdaLN-Zero modulation from the global vector
    xattn: bool                 # cross-attention to the global tokens
    params: dict                # sizing.block_params: norms, ada, mixer, xattn, ffn, mod_router
    total: int
    active: float               # parameters one byte touches here on average (training)


@dataclass(frozen=True)
class ModelView:
    dims: sizing.Dims
    blocks: tuple
    breakdown: dict             # sizing.param_breakdown (sums to total)
    total: int                  # sizing.total_params
    active: float               # sizing.active_params_per_byte
    flops: float                # sizing.flops_per_byte (training: forward + backward)
    memory: int                 # sizing.training_memory_bytes (per process)
    bytes_per_step: int         # sizing.tokens_per_step (per process)
    capacity: float             # mod.capacity
    lower_case_unrouted: int    # lower-case blocks that MoD does not route (mod.enabled off)

    @property
    def embed_params(self) -> int:
        return self.breakdown["embedding"] + self.breakdown["patches"]


def block_active(cfg: Config, i: int, d: sizing.Dims | None = None) -> float:
    """Block i's share of sizing.active_params_per_byte: an MoE FFN counts its router, shared
    experts and top_k routed experts; a MoD block counts mod.capacity of its weights (its router
    always runs)."""
    d = d or sizing.dims(cfg)
    p = sizing.block_params(cfg, i, d)
    if d.kinds[i] == "S":
        p["ffn"] = (d.n_routed * d.d_model
                    + (sizing.ffn_params(d, d.d_ff_shared) if d.n_shared else 0)
                    + d.top_k * sizing.ffn_params(d, d.d_ff, routed=True))
    share = cfg.mod.capacity if d.mod_blocks[i] else 1.0
    return share * sum(v for k, v in p.items() if k != "mod_router") + p["mod_router"]


def describe(cfg: Config) -> ModelView:
    """The model a (checked) config builds, part by part, with sizing's counts."""
    d = sizing.dims(cfg)
    pattern = (cfg.model.block_pattern * cfg.model.n_blocks)[:cfg.model.n_blocks]
    blocks = []
    for i, letter in enumerate(pattern):
        params = sizing.block_params(cfg, i, d)
        blocks.append(BlockView(
            index=i, letter=letter, moe=d.kinds[i] == "S", mod=bool(d.mod_blocks[i]),
            exit_head=i in d.exit_blocks, ada=i in d.ada_blocks, xattn=d.cross_attn,
            params=params, total=sum(params.values()), active=block_active(cfg, i, d)))
    return ModelView(
        dims=d, blocks=tuple(blocks), breakdown=sizing.param_breakdown(cfg),
        total=sizing.total_params(cfg), active=sizing.active_params_per_byte(cfg),
        flops=sizing.flops_per_byte(cfg), memory=sizing.training_memory_bytes(cfg),
        bytes_per_step=sizing.tokens_per_step(cfg), capacity=cfg.mod.capacity,
        lower_case_unrouted=sum(1 for ch in pattern if ch.islower()) if not cfg.mod.enabled else 0)


# -- labels (shared by the diagram and the table) ---------------------------------------------
def ffn_label(view: ModelView, block: BlockView) -> str:
    d = view.dims
    if block.moe:
        shared = f" + {d.n_shared} shared" if d.n_shared else ""
        return f"MoE {d.n_routed} × top-{d.top_k}{shared}"
    return f"dense FFN {d.d_ff_dense:,}"


def mtp_labels(view: ModelView) -> list[str]:
    """One label per multi-token-prediction head (collapsed to one when there are many)."""
    n = view.dims.n_mtp
    return [f"MTP t+{k + 2}" for k in range(n)] if n <= 3 else [f"MTP t+2 … t+{n + 1} ({n})"]


def block_hover(view: ModelView, block: BlockView) -> str:
    """Hover text: the block's parts and their parameter counts (exact)."""
    lines = [f"<b>block {block.index}</b> ({block.letter}: SSM + {'MoE' if block.moe else 'dense'} FFN"
             + (f", MoD {view.capacity:.0%}" if block.mod else "") + ")"]
    names = {"norms": "RMSNorms", "ada": "AdaLN-Zero", "mixer": "SSM mixer",
             "xattn": "cross-attention", "ffn": "FFN" + (" (all experts)" if block.moe else ""),
             "mod_router": "MoD router"}
    lines += [f"{names[part]}: {block.params[part]:,}" for part in BLOCK_PARTS if block.params[part]]
    lines.append(f"total: {block.total:,}; active per byte: {block.active:,.0f}")
    return "<br>".join(lines)


# -- the table ---------------------------------------------------------------------------------
def parts_rows(view: ModelView) -> list[dict]:
    """Rows of the parameter table: embedding, each block, globals, heads, cascade. `total`
    adds up to sizing.total_params; `active` to sizing.active_params_per_byte."""
    d, bd = view.dims, view.breakdown
    scales = ", ".join(str(s) for s in d.scales) or "none"
    embed_active = (1 + len(d.scales)) * d.d_model       # one row of each table per byte
    rows = [{"part": "embedding", "what": f"byte table 256 × {d.d_model}; patch scales {scales}",
             "total": view.embed_params, "active": embed_active}]
    for b in view.blocks:
        flags = [f for f, on in (("MoD", b.mod), ("exit", b.exit_head), ("AdaLN", b.ada),
                                 ("x-attn", b.xattn)) if on]
        rows.append({"part": f"block {b.index} ({b.letter})",
                     "what": ffn_label(view, b) + ("; " + ", ".join(flags) if flags else ""),
                     "mixer": b.params["mixer"], "ffn": b.params["ffn"],
                     "other": b.total - b.params["mixer"] - b.params["ffn"],
                     "total": b.total, "active": b.active})
    if bd["globals"]:
        rows.append({"part": "global tokens", "what": f"{d.d_globals} values -> "
                     f"{d.d_globals} tokens for cross-attention", "total": bd["globals"],
                     "active": None})
    heads = ["final (W_out shared)"] + [f"{len(d.exit_blocks)} exit norm(s)"] * bool(d.exit_blocks)
    heads += [f"{d.n_mtp} MTP head(s)"] * bool(d.n_mtp)
    outside = view.active - sum(b.active for b in view.blocks)    # embedding rows and the final head
    rows.append({"part": "heads", "what": ", ".join(heads), "total": bd["head"],
                 "active": outside - embed_active})
    if bd["cascade"]:
        rows.append({"part": "cascade", "what": f"order 1-3 byte contexts, mixer width "
                     f"{d.cascade_hidden}", "total": bd["cascade"], "active": None})
    return rows
