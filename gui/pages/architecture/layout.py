"""Architecture tab: a diagram of the sidebar's model, its size cards and a table of parameters
per part (pure layout and the pieces its callback fills in)."""
from __future__ import annotations

import dash_bootstrap_components as dbc
from dash import html

from umoec.units import fmt_bytes, fmt_count

from ...components.analysis_widgets import card, graph, metric_card
from ...figures.architecture import ARCH_COLOURS
from ...view.architecture import ModelView, parts_rows
from . import ids

DIAGRAM_MIN_WIDTH_PX = 860      # below this the chip labels would overlap: scroll instead
LEGEND = (("moe", "MoE FFN (S)"), ("dense", "dense FFN (D)"), ("mod", "Mixture-of-Depths"),
          ("ada", "AdaLN-Zero"), ("xattn", "cross-attention"), ("exit", "early-exit head"),
          ("embed", "embedding / patches"), ("head", "heads"), ("cascade", "cascade"))


def _legend() -> html.Div:
    items = [html.Span([html.Span(className="arch-swatch", style={"background": ARCH_COLOURS[key][0],
                                                                  "borderColor": ARCH_COLOURS[key][1]}),
                        label], className="me-3 text-nowrap") for key, label in LEGEND]
    items.append(html.Span("dashed block: MoD may skip it · bars: grey total, blue active per "
                           "byte · hover a row for exact counts", className="text-muted"))
    return html.Div(items, className="small mb-1")


def layout() -> html.Div:
    return html.Div([
        html.Div(id=ids.ARCH_MESSAGE),
        dbc.Row(id=ids.ARCH_CARDS, class_name="g-2 mb-2"),
        card("Model diagram (the sidebar's config, redrawn on every change)", _legend(),
             html.Div(graph(ids.ARCH_DIAGRAM, "Open the tab to draw the configured model",
                            height=420),
                      style={"minWidth": f"{DIAGRAM_MIN_WIDTH_PX}px"}),
             class_name="mb-3 arch-diagram-card"),
        card("Parameters per block (umoec/sizing.py: the counts the model is built from)",
             html.Div(id=ids.ARCH_TABLE), class_name="mb-3"),
    ], id="arch-panel")


# -- pieces the callback fills in ------------------------------------------------------------
def cards(view: ModelView) -> list:
    return [
        metric_card("parameters", fmt_count(view.total), "total, every expert"),
        metric_card("active params / byte", fmt_count(view.active),
                    f"{view.active / view.total:.0%} of the total" if view.total else ""),
        metric_card("training FLOPs / byte", fmt_count(view.flops), "forward + backward"),
        metric_card("training memory", fmt_bytes(view.memory),
                    f"per process at {view.bytes_per_step:,} bytes/step (estimate)"),
    ]


def _n(value) -> str:
    return "" if value is None else f"{value:,.0f}"


def block_table(view: ModelView) -> dbc.Table:
    head = html.Thead(html.Tr([html.Th(h) for h in ("part", "what", "mixer", "FFN", "other",
                                                     "total", "active / byte")]))
    body = [html.Tr([html.Td(r["part"], className="text-nowrap"), html.Td(r["what"]),
                     *(html.Td(_n(r.get(k))) for k in ("mixer", "ffn", "other")),
                     html.Td(html.Strong(_n(r["total"]))), html.Td(_n(r["active"]))],
                    className="arch-block-row" if r["part"].startswith("block") else None)
            for r in parts_rows(view)]
    body.append(html.Tr([html.Td(html.Strong("total")),
                         html.Td("sizing.total_params, sizing.active_params_per_byte"),
                         *(html.Td("") for _ in range(3)), html.Td(html.Strong(f"{view.total:,}")),
                         html.Td(html.Strong(f"{view.active:,.0f}"))], className="table-light"))
    return dbc.Table([head, html.Tbody(body)], size="sm", hover=True, responsive=True,
                     class_name="small mb-0 arch-table")
