"""Float weights -> the coding model's integers (the one place where rounding to a model happens).

Glossary of the stored tensors (safetensors names, see docs/models.md):
  <linear>.q  int8 (out, in)   weights, symmetric per output row: w ~= q * s
  <linear>.s  float64 (out,)   the row's scale s = max|w_row| / 127
  <conv>.q    int16 (ch, K)    the depthwise conv, per channel: s = max|w_row| / 32767
  <linear>.b  int32 (out,)     bias in ACT format (2**-12)
  <vector>    int32            norm weights, embeddings, conv bias, dt bias, D in ACT format;
                               A = exp(A_log) in Q16; MoE balancing bias in GATE format (2**-24)
Quantisation uses only correctly rounded IEEE operations (and `decimal` for exp), so exporting
the same checkpoint gives the same integers, and the same model hash, on any machine.
"""
from __future__ import annotations

from decimal import Decimal, localcontext

import numpy as np

from .fixed import ACT, GATE, W8, W16

A_FRAC = 16          # fraction bits of A = exp(A_log) (the SSM's per-head decay rate)
INT32_MAX = (1 << 31) - 1


class QuantizeError(ValueError):
    """A weight cannot be represented in the engine's formats; the message names it."""


def _fixed(name: str, x: np.ndarray, frac: int) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    if not np.isfinite(x).all():
        raise QuantizeError(f"{name} holds NaN or inf: the checkpoint is damaged")
    q = np.rint(x * (1 << frac))
    if np.abs(q).max(initial=0) > INT32_MAX:
        raise QuantizeError(f"{name} has values up to {np.abs(x).max():.3g}, beyond what "
                            f"{frac} fraction bits in int32 hold")
    return q.astype(np.int32)


def exp_exact(x: np.ndarray) -> np.ndarray:
    """exp of each float64 value through `decimal` (libm's exp differs between machines; this
    keeps an export a pure function of the checkpoint's bits)."""
    with localcontext() as ctx:
        ctx.prec = 40
        vals = [float(Decimal(float(v)).exp()) for v in np.asarray(x, dtype=np.float64).ravel()]
    return np.array(vals, dtype=np.float64).reshape(np.shape(x))


def _rows(name: str, w: np.ndarray, wmax: int, dtype) -> tuple[np.ndarray, np.ndarray]:
    w = np.asarray(w, dtype=np.float64)
    if w.ndim != 2:
        raise QuantizeError(f"{name} must be a matrix, got shape {w.shape}")
    if not np.isfinite(w).all():
        raise QuantizeError(f"{name} holds NaN or inf: the checkpoint is damaged")
    amax = np.abs(w).max(axis=1)
    s = np.where(amax > 0, amax / wmax, 1.0)
    return np.clip(np.rint(w / s[:, None]), -wmax, wmax).astype(dtype), s


def linear(out: dict, name: str, w: np.ndarray, b: np.ndarray | None = None) -> None:
    """Quantise a (out, in) weight (and bias) into out[name + '.q' (int8) / '.s' / '.b']."""
    out[name + ".q"], out[name + ".s"] = _rows(name, w, W8, np.int8)
    if b is not None:
        out[name + ".b"] = _fixed(name + ".b", b, ACT)


def vector(out: dict, name: str, v: np.ndarray, frac: int = ACT) -> None:
    out[name] = _fixed(name, v, frac)


def conv(out: dict, name: str, w: np.ndarray, b: np.ndarray) -> None:
    """Depthwise conv (ch, K): per-channel int16 (no matrix product: no int8 needed)."""
    out[name + ".q"], out[name + ".s"] = _rows(name, w, W16, np.int16)
    out[name + ".b"] = _fixed(name + ".b", b, ACT)


def export_tensors(state: dict, cfg) -> dict[str, np.ndarray]:
    """Every tensor the engine reads, from a model state_dict (name -> float array) and its
    Config. LoRA factors and multi-token heads are training-only and left out."""
    from ..sizing import dims
    d = dims(cfg)
    st = {k: np.asarray(v, dtype=np.float64) for k, v in state.items()}

    def need(key: str) -> np.ndarray:
        if key not in st:
            raise QuantizeError(f"the checkpoint has no tensor {key}; it does not match its "
                                "own config")
        return st[key]

    out: dict[str, np.ndarray] = {}
    vector(out, "embed.byte", need("embed.byte.weight"))
    for i in range(len(d.scales)):
        vector(out, f"embed.patch.{i}", need(f"embed.patch.{i}.weight"))
    for i, kind in enumerate(d.kinds):
        p = f"blocks.{i}."
        if i in d.ada_blocks:
            linear(out, p + "ada", need(p + "ada.proj.weight"), need(p + "ada.proj.bias"))
        else:
            vector(out, p + "norm1", need(p + "norm1.weight"))
            vector(out, p + "norm2", need(p + "norm2.weight"))
        m = p + "mixer."
        linear(out, m + "in_proj", need(m + "in_proj.weight"))
        conv(out, m + "conv", need(m + "conv_weight"), need(m + "conv_bias"))
        vector(out, m + "dt_bias", need(m + "dt_bias"))
        vector(out, m + "A", exp_exact(need(m + "A_log")), A_FRAC)
        vector(out, m + "D", need(m + "D"))
        vector(out, m + "norm", need(m + "norm_weight"))
        linear(out, m + "out_proj", need(m + "out_proj.weight"))
        if d.cross_attn:
            x = p + "xattn."
            vector(out, x + "norm", need(x + "norm.weight"))
            for part in ("q", "k", "v", "o"):
                linear(out, x + part, need(x + f"{part}.weight"))
        f = p + "ffn."
        if kind == "D":
            linear(out, f + "w1", need(f + "w1.weight"))
            linear(out, f + "w2", need(f + "w2.weight"))
        else:
            linear(out, f + "router", need(f + "router.weight"))
            vector(out, f + "bias", need(f + "bias"), GATE)
            if d.n_shared:
                linear(out, f + "shared.w1", need(f + "shared.w1.weight"))
                linear(out, f + "shared.w2", need(f + "shared.w2.weight"))
            for e in range(d.n_routed):
                linear(out, f + f"experts.{e}.w1", need(f + f"experts.{e}.w1.weight"))
                linear(out, f + f"experts.{e}.w2", need(f + f"experts.{e}.w2.weight"))
        if d.mod_blocks[i]:
            linear(out, p + "router", need(p + "router.weight"), need(p + "router.bias"))
    if d.cross_attn:
        vector(out, "globals.weight", need("globals.weight"))
        vector(out, "globals.bias", need("globals.bias"))
    vector(out, "heads.final_norm", need("heads.final_norm.weight"))
    linear(out, "heads.unembed", need("heads.unembed.weight"))
    for b in d.exit_blocks:
        vector(out, f"heads.exit_norm.{b}", need(f"heads.exit_norms.{b}.weight"))
    if d.cascade:
        linear(out, "cascade.hidden", need("cascade.hidden.weight"), need("cascade.hidden.bias"))
        linear(out, "cascade.out", need("cascade.out.weight"), need("cascade.out.bias"))
    return out
