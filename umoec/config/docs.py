"""docs/config.md, generated from the schema (`python -m bin.config docs`); a test keeps it
current."""
from __future__ import annotations

from .registry import all_fields, section_fields
from .schema import BLOCK_ALPHABET, SECTION_TITLES

INTRO = f"""# Config reference

Generated from `umoec/config/schema.py` by `python -m bin.config docs`; do not edit by hand
(`tests/umoec/config/test_docs.py` fails when this file and the schema disagree).

A config is one YAML file with the sections below. Presets live in `configs/` (`tier1_micro`,
`tier2_small`, `tier3_base`); the schema's defaults are `tier1_micro`. Keys left out take their
default; unknown keys, wrong types, out-of-range values and inconsistent combinations are errors
that name the file, the key and what is allowed. Any field can be overridden on the command line
with its dotted key: `--set moe.top_k=2 --set optimizer.adamw.betas=0.9,0.95`.

The cockpit's form shows each field with the widget below and the component id
`config-<section>-<field>` (dots and underscores become dashes).

`model.block_pattern` alphabet: `{BLOCK_ALPHABET}` — `S` selective-SSM mixer + MoE FFN, `D`
selective-SSM mixer + dense FFN; lower case marks a block Mixture-of-Depths may skip.

## Rules between fields

- `moe.top_k <= moe.n_routed`
- `model.block_pattern` is non-empty and uses only `{BLOCK_ALPHABET}`
- every `early_exit.blocks` entry `< model.n_blocks - 1`; with `early_exit.enabled`, the list is
  non-empty and `head.n_early_exit_heads` equals its length
- every `conditioning.ada_ln_blocks` entry `< model.n_blocks`; with `ada_ln_zero` the list is
  non-empty; `ada_ln_zero` or `cross_attn` need `head.d_globals >= 1`
- every `patches.scales` entry divides `model.context_len`; `multi_token_predict` needs
  `patches.primary >= 2`
- `training.seq_len <= model.context_len`; `training.warmup_steps <= training.steps`
- `entropy.prob_precision <= entropy.precision / 2`

Warnings (shown, never blocking): `mod.enabled` with no lower-case block; bf16 precision on CPU.
"""


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|")


def render() -> str:
    out = [INTRO]
    for section, title in SECTION_TITLES.items():
        out.append(f"## {title} (`{section}`)\n")
        out.append("| key | type | default | allowed | unit | widget | effect |")
        out.append("|---|---|---|---|---|---|---|")
        for f in section_fields(section):
            default = ",".join(map(str, f.default)) if isinstance(f.default, (list, tuple)) \
                else str(f.default).lower() if isinstance(f.default, bool) else f.default
            out.append(f"| `{f.key}` | {f.kind} | `{default}` | {_cell(f.range_text())} | "
                       f"{f.spec.unit} | {f.widget} | {_cell(f.spec.description)} |")
        out.append("")
    top = [f for f in all_fields() if f.section == ""]
    out.append("## Top level\n")
    for f in top:
        out.append(f"- `{f.key}` (default `{f.default}`): {f.spec.description}")
    return "\n".join(out) + "\n"
