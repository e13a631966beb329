"""Architecture and Growth tabs without a browser: the model description and its counts (equal to
umoec.sizing), the growth knobs and curves, and the copy into the sidebar. The diagram's elements
per block: tests/gui/figures/test_architecture.py."""
import math

import pytest

from gui import form, ids
from gui.figures.growth import growth_fig
from gui.pages.architecture import callbacks as arch_callbacks
from gui.pages.growth import callbacks as growth_callbacks
from gui.pages.growth import layout as growth_panel
from gui.pages.sidebar import callbacks as config_callbacks
from gui.view import architecture as A
from gui.view import growth as G
from tests.gui.arch_support import VARIANTS
from umoec import sizing


# -- the model description -------------------------------------------------------------------------
@pytest.mark.parametrize("name", list(VARIANTS))
def test_counts_equal_the_model_sizing(name):
    cfg = VARIANTS[name]
    view = A.describe(cfg)
    d = sizing.dims(cfg)
    assert len(view.blocks) == cfg.model.n_blocks
    for b in view.blocks:
        assert b.params == sizing.block_params(cfg, b.index)
        assert b.total == sizing.param_breakdown(cfg)[f"block_{b.index}"]
        assert b.moe == (d.kinds[b.index] == "S") and b.mod == d.mod_blocks[b.index]
        assert b.exit_head == (b.index in d.exit_blocks) and b.ada == (b.index in d.ada_blocks)
    rows = A.parts_rows(view)
    assert sum(r["total"] for r in rows) == view.total == sizing.total_params(cfg)
    assert sum(r["active"] or 0 for r in rows) == pytest.approx(sizing.active_params_per_byte(cfg))
    assert view.flops == sizing.flops_per_byte(cfg)
    assert view.memory == sizing.training_memory_bytes(cfg)


def test_block_active_follows_top_k_and_capacity():
    cfg = VARIANTS["tier1"]            # DSsS: d dense, S MoE, s MoE + MoD at capacity 0.5
    view = A.describe(cfg)
    dense, moe, mod = view.blocks[0], view.blocks[1], view.blocks[2]
    assert dense.active == dense.total                       # every weight runs
    assert moe.active < moe.total                             # 2 of 8 experts
    assert mod.active == pytest.approx(0.5 * (moe.active - moe.params["norms"] - moe.params["ada"]
                                              + mod.params["norms"]) + mod.params["mod_router"])


def test_ffn_labels_name_the_expert_setup():
    view = A.describe(VARIANTS["tier3"])
    assert A.ffn_label(view, view.blocks[1]) == "MoE 32 × top-4 + 2 shared"
    assert A.ffn_label(view, view.blocks[0]) == "dense FFN 3,072"


def test_invalid_form_gives_a_message_not_a_crash():
    values = form.preset_values("tier1_micro")
    for key, bad in (("model.d_model", 5), ("moe.top_k", 99), ("model.n_blocks", ""),
                     ("early_exit.blocks", "x")):
        out = arch_callbacks.arch_view({**values, key: bad}, "tier1_micro")
        assert "error" in str(out["message"]) and out["cards"] == [] and out["table"] is None
        assert "errors" in out["figure"].layout.annotations[0].text
    out = arch_callbacks.arch_view({**values, "mod.enabled": False}, "tier1_micro")
    assert "lower-case block(s) run on every byte" in str(out["message"])
    assert len(out["cards"]) == 4 and out["table"] is not None


# -- growth -----------------------------------------------------------------------------------------
def test_ladders_contain_the_current_value_and_legal_contexts():
    assert G.ladder("model.d_model", 200)[:8] == [16, 24, 32, 48, 64, 96, 128, 192]
    assert 200 in G.ladder("model.d_model", 200)
    ctx = G.ladder("model.context_len", 2048, (4, 16, 64))
    assert 2048 in ctx and all(v % 64 == 0 for v in ctx)
    assert G.ladder("model.n_blocks", 4) == list(range(1, 65))
    assert G.ladder("moe.n_routed", 100)[-1] == 100
    setup = growth_panel.slider_setup("moe.d_ff", 128)
    assert setup["values"][setup["index"]] == 128
    assert growth_panel.marks(list(range(1, 65))) == {0: "1", 16: "17", 32: "33", 47: "48", 63: "64"}
    assert growth_panel.fmt_knob(1536) == "1.5k" and growth_panel.fmt_knob(1 << 20) == "1M"


def test_grow_keeps_the_config_legal():
    values = form.preset_values("tier3_base")     # 12 blocks, exits 3,7, AdaLN 0-3, seq = context
    g = G.grow(values, "tier3_base", {"model.n_blocks": 3, "moe.n_routed": 2,
                                      "model.context_len": 512})
    assert g.config is not None, g.check.errors
    assert g.changes["moe.top_k"] == 2                                 # capped at n_routed
    assert g.changes["training.seq_len"] == 512                        # followed context_len
    assert g.changes["early_exit.blocks"] == "" and g.changes["early_exit.enabled"] is False
    assert g.changes["head.n_early_exit_heads"] == 0
    assert g.changes["conditioning.ada_ln_blocks"] == "0,1,2"
    assert len(g.notes) == 4
    g = G.grow(values, "tier3_base", {"model.n_blocks": 6})
    assert g.changes == {"model.n_blocks": 6, "early_exit.blocks": "3",
                         "head.n_early_exit_heads": 1}
    assert G.grow(values, "tier3_base", G.knob_values(values)).changes == {}


def test_sizes_come_from_sizing_and_the_heuristic_is_20_bytes_per_parameter():
    values = form.preset_values("tier2_small")
    g = G.grow(values, "tier2_small", {"model.d_model": 384})
    s = G.sizes(g.config)
    assert s.total == sizing.total_params(g.config) and s.memory == sizing.training_memory_bytes(g.config)
    assert s.active == sizing.active_params_per_byte(g.config)
    assert s.flops == sizing.flops_per_byte(g.config)
    assert s.bytes_per_step == sizing.tokens_per_step(g.config)
    assert G.BYTES_PER_PARAM == 20 and s.optimal_bytes == 20 * s.total
    assert s.optimal_steps == pytest.approx(s.optimal_bytes / s.bytes_per_step)


def test_sweeps_and_curves():
    values = form.preset_values("tier1_micro")
    choice = G.knob_values(values)
    sweep = G.sweep(values, "tier1_micro", choice, "model.d_model", G.ladder("model.d_model", 96))
    assert list(sweep.columns) == ["x", "total", "active", "flops", "memory"]
    assert sweep["total"].is_monotonic_increasing and sweep["flops"].is_monotonic_increasing
    routed = G.sweep(values, "tier1_micro", choice, "moe.n_routed", [2, 4, 8, 16])
    assert routed["total"].is_monotonic_increasing
    assert routed["flops"].max() / routed["flops"].min() < 1.01       # top_k fixed: same compute
    sweeps = {"model.d_model": sweep, "moe.n_routed": routed}
    point = G.sizes(form.check(values, "tier1_micro").config)
    fig = growth_fig(sweeps, {"model.d_model": 96, "moe.n_routed": 8},
                     {"total": point.total, "active": point.active, "flops": point.flops,
                      "memory": point.memory}, log_x=G.LOG_X)
    lines = [t for t in fig.data if t.mode == "lines"]
    marks = [t for t in fig.data if t.mode == "markers"]
    assert len(lines) == 2 * 4 and len(marks) == 2 * 4
    assert all(m.x[0] in (96, 8) for m in marks)
    assert fig.layout.xaxis.type == "log" and fig.layout.xaxis2.type != "log"
    assert len(fig.layout.shapes) == 2 * 3                  # dotted line at the chosen value
    assert "No legal" in growth_fig({}, {}, {}).layout.annotations[0].text


def test_growth_view_and_copy_reach_the_sidebar():
    values = form.preset_values("tier1_micro")
    same = growth_callbacks.growth_view(values, "tier1_micro", G.knob_values(values))
    assert same["copy_disabled"] and same["pending"] is None and len(same["cards"]) == 6
    choice = {**G.knob_values(values), "model.d_model": 256, "moe.top_k": 12}
    out = growth_callbacks.growth_view(values, "tier1_micro", choice)
    assert not out["copy_disabled"]
    assert out["pending"] == {"model.d_model": 256, "moe.top_k": 8}
    assert "capped at n_routed" in str(out["readouts"]["moe.top_k"])
    assert "config 96" in str(out["readouts"]["model.d_model"])
    payload, status = growth_callbacks.copy_payload(out["pending"])
    assert "d_model=256" in str(status)
    filled = config_callbacks.fill(ids.CONFIG_INJECT, "tier1_micro", [], {}, payload, None, None)
    assert filled["values"] == {"model.d_model": 256, "moe.top_k": 8}
    assert "from Growth" in str(filled["message"])
    assert growth_callbacks.copy_payload(None)[0] is None
    bad = growth_callbacks.growth_view({**values, "model.d_model": "x"}, "tier1_micro", choice)
    assert bad["copy_disabled"] and "error" in str(bad["message"])


def test_sliders_follow_the_form():
    values = form.preset_values("tier2_small")
    setups = growth_callbacks.follow(values)
    for key in G.KNOBS:
        s = setups[key]
        assert s["values"][s["index"]] == values[key]
    assert growth_callbacks.chosen([setups[k]["index"] for k in G.KNOBS],
                                   {k: setups[k]["values"] for k in G.KNOBS}) == \
        {k: values[k] for k in G.KNOBS}
    assert growth_callbacks.follow({**values, "model.d_model": ""})["model.d_model"] is None
    assert math.lcm(4, 16, 64) == 64 and all(
        v % 64 == 0 for v in setups["model.context_len"]["values"])
