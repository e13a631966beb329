"""The Architecture tab's diagram (gui/figures/architecture.py): every block drawn with its parts,
bar labels and hovers carrying umoec.sizing's numbers, readable at 24 blocks."""
import re

import pytest

from gui.figures.architecture import architecture_fig
from gui.view import architecture as A
from tests.gui.arch_support import VARIANTS, cfg_with
from umoec.units import fmt_count


def named(fig, pattern: str) -> list:
    rx = re.compile(pattern)
    return [s for s in list(fig.layout.shapes) if s.name and rx.fullmatch(s.name)]


@pytest.mark.parametrize("name", list(VARIANTS))
def test_diagram_draws_every_block_with_its_parts(name):
    cfg = VARIANTS[name]
    view = A.describe(cfg)
    d = view.dims
    fig = architecture_fig(view)
    assert len(named(fig, r"block-\d+")) == len(view.blocks)
    assert len(named(fig, r"block-\d+-mixer")) == len(view.blocks)
    assert [int(s.name.split("-")[1]) for s in named(fig, r"block-\d+-ffn-moe")] == \
        [b.index for b in view.blocks if b.moe]
    assert [int(s.name.split("-")[1]) for s in named(fig, r"block-\d+-ffn-dense")] == \
        [b.index for b in view.blocks if not b.moe]
    assert [s.name for s in named(fig, r"block-\d+-mod")] == \
        [f"block-{b.index}-mod" for b in view.blocks if b.mod]
    assert [s.name for s in named(fig, r"block-\d+-exit")] == \
        [f"block-{i}-exit" for i in d.exit_blocks]
    assert [s.name for s in named(fig, r"block-\d+-ada")] == [f"block-{i}-ada" for i in d.ada_blocks]
    assert len(named(fig, r"block-\d+-xattn")) == (len(view.blocks) if d.cross_attn else 0)
    assert [s.name for s in named(fig, r"patch-\d+")] == [f"patch-{p}" for p in d.scales]
    assert len(named(fig, r"head-mtp-\d+")) == len(A.mtp_labels(view))
    assert len(named(fig, "cascade")) == int(d.cascade)
    assert len(named(fig, "globals")) == int(bool(d.ada_blocks) or d.cross_attn)
    # MoD blocks are dashed; each block's bar label and hover carry sizing's numbers
    for box in named(fig, r"block-\d+"):
        block = view.blocks[int(box.name.split("-")[1])]
        assert (box.line.dash == "dash") == block.mod
    labels = {a.name: a.text for a in fig.layout.annotations if a.name}
    hover = fig.data[0].hovertext
    for b in view.blocks:
        assert labels[f"block-{b.index}-count"] == f"{fmt_count(b.total)} · {fmt_count(b.active)}"
        assert f"total: {b.total:,}" in hover[b.index + 1]            # row 0 is the embedding


def test_diagram_grows_with_the_number_of_blocks():
    heights = [architecture_fig(A.describe(cfg_with(**{"model.n_blocks": n}))).layout.height
               for n in (4, 12, 24)]
    assert heights == sorted(heights) and heights[-1] < 1100     # readable at 24 blocks
