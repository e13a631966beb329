"""Architecture tab: a diagram of the model a config builds (gui/view/architecture.py's ModelView),
one row per part with a bar of its parameters."""
from __future__ import annotations

import plotly.graph_objects as go

from umoec.units import fmt_count

from ..view.architecture import block_hover, ffn_label, mtp_labels
from .base import TEMPLATE

# Diagram columns, in x units of 0..100 (the figure keeps a minimum width so labels fit).
ARCH_X = {"gutter": (0.5, 8.0), "box": (9.0, 71.0), "label": (9.0, 13.5), "norm": (14.0, 21.5),
          "mixer": (22.0, 33.0), "xattn": (33.5, 40.0), "mod": (62.5, 70.5), "exit": (73.0, 81.0),
          "bar": (83.0, 99.5)}
ARCH_BUS_X = 4.25
ARCH_FFN_END = 62.0
# (fill, line) per part
ARCH_COLOURS = {"moe": ("#cfe2ff", "#0d6efd"), "dense": ("#d1e7dd", "#198754"),
                "mixer": ("#e9ecef", "#6c757d"), "norm": ("#ffffff", "#adb5bd"),
                "ada": ("#e0cffc", "#6f42c1"), "xattn": ("#c3f2e3", "#20c997"),
                "mod": ("#ffe5d0", "#fd7e14"), "exit": ("#f7d6e6", "#d63384"),
                "embed": ("#cff4fc", "#0aa2c0"), "head": ("#e2e3e5", "#343a40"),
                "cascade": ("#efe3d3", "#8c6d46"), "globals": ("#e0cffc", "#6f42c1"),
                "box": ("#ffffff", "#adb5bd"), "bar": ("#dee2e6", "#dee2e6"),
                "bar_active": ("#9ec5fe", "#9ec5fe")}
_CHIP_H = 0.27      # half heights in row units
_BOX_H = 0.37


def architecture_fig(view) -> go.Figure:
    """A diagram of a `ModelView`: embedding, blocks, heads and cascade, one row each with a bar of
    its parameters (grey: total, blue: active per byte) and a hover listing them exactly. Shapes
    and annotations are named (block-3, block-3-ffn-moe, patch-16, ...) so tests can count them."""
    d = view.dims
    shapes: list[dict] = []
    notes: list[dict] = []
    hovers: list[tuple[float, str]] = []     # (row y, hover text)

    def rect(name, x, y, colours, h=_CHIP_H, dash=None, width=1.2):
        fill, line = ARCH_COLOURS[colours] if isinstance(colours, str) else colours
        shapes.append({"type": "rect", "name": name, "x0": x[0], "x1": x[1], "y0": y - h,
                       "y1": y + h, "fillcolor": fill, "layer": "below",
                       "line": {"color": line, "width": width, "dash": dash or "solid"}})

    def text(name, x, y, label, size=11, colour="#212529", anchor="center", bold=False):
        notes.append({"name": name, "x": x, "y": y, "text": f"<b>{label}</b>" if bold else label,
                      "showarrow": False, "xanchor": anchor, "font": {"size": size, "color": colour}})

    def chip(name, x, y, colours, label, size=11):
        rect(name, x, y, colours)
        text(name, (x[0] + x[1]) / 2, y, label, size=size)

    def line(name, x0, y0, x1, y1, colour, width=1.5, dash="solid"):
        shapes.append({"type": "line", "name": name, "x0": x0, "x1": x1, "y0": y0, "y1": y1,
                       "line": {"color": colour, "width": width, "dash": dash}})

    def chips_across(y, names, labels, line_colour, size, none_name, none_text):
        """Chips side by side from the FFN column to the MoD column (patch scales, MTP heads)."""
        x0, x1 = ffn_x0, ARCH_X["mod"][1]
        if not names:
            text(none_name, (x0 + x1) / 2, y, none_text, size=10, colour="#6c757d")
        w = (x1 - x0) / max(1, len(names))
        for k, (name, label) in enumerate(zip(names, labels, strict=True)):
            chip(name, (x0 + k * w + 0.25, x0 + (k + 1) * w - 0.25), y, ("#ffffff", line_colour), label,
                 size=size)

    def arrow(y_from, y_to):
        notes.append({"x": 27.5, "y": y_to + _BOX_H, "ax": 27.5, "ay": y_from - _BOX_H, "xref": "x",
                      "yref": "y", "axref": "x", "ayref": "y", "text": "", "showarrow": True,
                      "arrowhead": 2, "arrowsize": 1, "arrowwidth": 1.2, "arrowcolor": "#6c757d"})

    largest = max([view.embed_params, view.breakdown["head"], view.breakdown["cascade"]]
                  + [b.total for b in view.blocks]) or 1

    def bar(name, y, total, active=None):
        x0, x1 = ARCH_X["bar"]
        span = x1 - x0
        rect(name + "-bar", (x0, x0 + span * total / largest), y, "bar", h=0.2, width=0)
        label = fmt_count(total)
        if active is not None:
            rect(name + "-bar-active", (x0, x0 + span * min(active, total) / largest), y,
                 "bar_active", h=0.2, width=0)
            label += f" · {fmt_count(active)}"
        text(name + "-count", x0 + 0.4, y, label, size=10, anchor="left")

    def part(name, y, tag, left, left_text, total, hover):
        """The row of the embedding, the heads or the cascade: box, tag, a chip under norm and mixer,
        bar and hover (what it draws on the right is the caller's)."""
        rect(name, ARCH_X["box"], y, name, h=_BOX_H)
        text(name + "-label", sum(ARCH_X["label"]) / 2, y, tag, size=10, bold=True)
        chip(f"{name}-{left}", (ARCH_X["norm"][0], ARCH_X["mixer"][1]), y, ("#ffffff", ARCH_COLOURS[name][1]),
             left_text)
        bar(name, y, total)
        hovers.append((y, hover))

    # header row ------------------------------------------------------------------------------
    y = 0.0
    ffn_x0 = ARCH_X["xattn"][1] + 0.5 if d.cross_attn else ARCH_X["xattn"][0]
    cols = {"norm": ("norm", ARCH_X["norm"]), "mixer": ("mixer", ARCH_X["mixer"]),
            "ffn": ("FFN", (ffn_x0, ARCH_FFN_END)), "mod": ("MoD", ARCH_X["mod"]),
            "exit": ("exit head", ARCH_X["exit"])}
    if d.cross_attn:
        cols["xattn"] = ("x-attn", ARCH_X["xattn"])
    for key, (label, (x0, x1)) in cols.items():
        text(f"header-{key}", (x0 + x1) / 2, y, label, size=10, colour="#6c757d")
    text("header-bar", ARCH_X["bar"][0] + 0.4, y, "parameters: total · active/byte", size=10,
         colour="#6c757d", anchor="left")
    text("header-block", sum(ARCH_X["label"]) / 2, y, "block", size=10, colour="#6c757d")

    # embedding --------------------------------------------------------------------------------
    y = -1.0
    part("embed", y, "in", "byte", f"byte embedding 256 × {d.d_model:,}", view.embed_params,
         f"<b>embedding</b><br>byte table: {view.breakdown['embedding']:,}<br>patch tables "
         f"({', '.join(map(str, d.scales)) or 'none'}): {view.breakdown['patches']:,}")
    wide = (ARCH_X["mod"][1] - ffn_x0) / max(1, len(d.scales)) > 6     # room for "patch 16"
    chips_across(y, [f"patch-{s}" for s in d.scales], [f"patch {s}" if wide else str(s) for s in d.scales],
                 "#0aa2c0", 11 if wide else 10, "patch-none", "no patch scales")

    # conditioning source ---------------------------------------------------------------------
    linked = [b for b in view.blocks if b.ada or b.xattn]
    if linked:
        chip("globals", ARCH_X["gutter"], y, "globals", f"g ({d.d_globals})", size=10)
        last = -(2.0 + linked[-1].index)
        line("globals-bus", ARCH_BUS_X, y - _CHIP_H, ARCH_BUS_X, last, "#6f42c1", width=1.5)

    # blocks -----------------------------------------------------------------------------------
    for b in view.blocks:
        y_prev, y = y, -(2.0 + b.index)
        arrow(y_prev, y)
        name = f"block-{b.index}"
        rect(name, ARCH_X["box"], y, ("#ffffff", ARCH_COLOURS["mod" if b.mod else "box"][1]), h=_BOX_H,
             dash="dash" if b.mod else None, width=1.6 if b.mod else 1.2)
        text(name + "-label", sum(ARCH_X["label"]) / 2, y, f"{b.index} <i>{b.letter}</i>",
             size=11, bold=True)
        chip(name + ("-ada" if b.ada else "-norm"), ARCH_X["norm"], y, "ada" if b.ada else "norm",
             "AdaLN-Zero" if b.ada else "RMSNorm", size=10)
        chip(name + "-mixer", ARCH_X["mixer"], y, "mixer", "SSM mixer")
        if b.xattn:
            chip(name + "-xattn", ARCH_X["xattn"], y, "xattn", "x-attn", size=10)
            line(name + "-xattn-link", ARCH_BUS_X, y, ARCH_X["box"][0], y, "#20c997", width=1.5,
                 dash="dot" if b.ada else "solid")
        if b.ada:
            line(name + "-ada-link", ARCH_BUS_X, y + (0.12 if b.xattn else 0), ARCH_X["box"][0],
                 y + (0.12 if b.xattn else 0), "#6f42c1", width=1.5)
        chip(name + ("-ffn-moe" if b.moe else "-ffn-dense"), (ffn_x0, ARCH_FFN_END), y,
             "moe" if b.moe else "dense", ffn_label(view, b))
        if b.mod:
            chip(name + "-mod", ARCH_X["mod"], y, "mod", f"MoD {view.capacity:.0%}", size=10)
        if b.exit_head:
            line(name + "-exit-link", ARCH_X["box"][1], y, ARCH_X["exit"][0], y, "#d63384")
            chip(name + "-exit", ARCH_X["exit"], y, "exit", f"exit after {b.index}", size=10)
        bar(name, y, b.total, b.active)
        hovers.append((y, block_hover(view, b)))

    # heads and cascade --------------------------------------------------------------------------
    y_prev, y = y, y - 1.0
    arrow(y_prev, y)
    part("head", y, "out", "final", f"norm → W_out {d.d_model:,}→256", view.breakdown["head"],
         f"<b>heads</b>: {view.breakdown['head']:,}<br>one W_out ({d.d_model}→256) shared by the "
         f"final head, {len(d.exit_blocks)} exit head(s) and {d.n_mtp} MTP head(s)")
    mtp = mtp_labels(view)
    chips_across(y, [f"head-mtp-{k + 1}" for k in range(len(mtp))], mtp, "#343a40", 10, "head-mtp-none",
                 "no multi-token heads")
    if d.cascade:
        y -= 1.0
        part("cascade", y, "mix", "tables", "cascade: order 1-3 byte contexts", view.breakdown["cascade"],
             f"<b>cascade</b>: {view.breakdown['cascade']:,} (mixer; the count tables are statistics, "
             "not parameters)")
        chip("cascade-mixer", (ffn_x0, ARCH_X["mod"][1]), y, ("#ffffff", "#8c6d46"),
             f"mixer ({d.cascade_hidden}) → coder distribution", size=10)

    n_rows = -y + 1
    fig = go.Figure(go.Scatter(x=[50] * len(hovers), y=[h[0] for h in hovers], mode="markers",
                               marker={"size": 1, "opacity": 0}, hovertext=[h[1] for h in hovers],
                               hoverinfo="text", showlegend=False, name="parts"))
    fig.update_layout(
        template=TEMPLATE, shapes=shapes, annotations=notes, showlegend=False,
        height=int(70 + n_rows * (34 if len(view.blocks) <= 12 else 30)),
        margin={"l": 10, "r": 10, "t": 30, "b": 10}, hovermode="y", hoverdistance=-1,
        dragmode=False, plot_bgcolor="#ffffff",
        title={"text": f"d_model {d.d_model:,} · {len(view.blocks)} blocks · "
                       f"SSM E {d.d_inner:,}, N {d.d_state}, conv {d.d_conv}, {d.n_heads} head(s)"
                       f" · experts {d.n_routed} × width {d.d_ff:,}",
               "font": {"size": 12, "color": "#495057"}, "x": 0.01, "y": 0.995, "yanchor": "top"},
        xaxis={"range": [0, 100], "visible": False, "fixedrange": True},
        yaxis={"range": [y - 0.6, 0.5], "visible": False, "fixedrange": True},
        uirevision="architecture")
    return fig
