"""Growth tab: six size knobs starting from the sidebar's config, the sizes they give as cards and
curves, and a button that copies the knobs into the config editor (pure layout and the pieces its
callbacks fill in; the arithmetic is gui/view/growth.py)."""
from __future__ import annotations

from functools import partial

import dash_bootstrap_components as dbc
from dash import dcc, html

from umoec.units import fmt_bytes, fmt_count

from ... import form
from ...components.analysis_widgets import card, graph, metric_card
from ...view.growth import BYTES_PER_PARAM, KNOBS, Sizes, fmt_knob, ladder, nearest_index, scales_of, short
from . import ids

MAX_MARK_LABELS = 5


def marks(values: list[int]) -> dict:
    """Labels at a few evenly spaced slider positions."""
    n = len(values)
    k = min(MAX_MARK_LABELS, n)
    picks = sorted({round(i * (n - 1) / (k - 1)) for i in range(k)}) if n > 1 else range(n)
    return {i: fmt_knob(values[i]) for i in picks}


def slider_setup(key: str, current: int | None, scales: tuple = ()) -> dict:
    """The slider of one knob: its ladder of values and the position of `current`."""
    values = ladder(key, current, scales)
    return {"values": values, "index": nearest_index(values, current)}


def _knob(key: str, setup: dict) -> html.Div:
    values = setup["values"]
    return html.Div([
        html.Div([html.Span(short(key), className="fw-semibold font-monospace small"),
                  html.Span(id=ids.growth_value_id(key), className="growth-readout ms-2 small")],
                 className="d-flex align-items-baseline"),
        dcc.Slider(id=ids.growth_slider_id(key), min=0, max=len(values) - 1, step=1,
                   value=setup["index"], marks=marks(values), updatemode="drag",
                   allow_direct_input=False),
    ], className="growth-knob", title=form.BY_KEY[key].spec.description)


def layout() -> html.Div:
    values = form.default_values()
    setups = {k: slider_setup(k, values[k], scales_of(values)) for k in KNOBS}
    return html.Div([
        dcc.Store(id=ids.GROWTH_LADDERS, data={k: s["values"] for k, s in setups.items()}),
        dcc.Store(id=ids.GROWTH_PENDING),
        html.Div(id=ids.GROWTH_MESSAGE),
        card("Size knobs (they start from the sidebar's config and follow it when it changes)",
             dbc.Row([dbc.Col(_knob(k, setups[k]), md=6, xl=4) for k in KNOBS], class_name="g-2"),
             html.Div([
                 dbc.Button("Copy into the config editor", id=ids.GROWTH_COPY, color="primary",
                            size="sm", class_name="me-2", disabled=True),
                 dbc.Button("Reset to the config", id=ids.GROWTH_RESET, color="secondary",
                            size="sm", outline=True, class_name="me-3"),
                 html.Span(id=ids.GROWTH_STATUS, className="small", role="status"),
             ], className="mt-2"),
             html.Div(id=ids.GROWTH_NOTES, className="small text-muted mt-1"),
             class_name="mb-2"),
        dbc.Row(id=ids.GROWTH_CARDS, class_name="g-2 mb-2"),
        card("How the sizes grow with d_model, n_blocks and n_routed (the other knobs as chosen; "
             "◆ the chosen point)", graph(ids.GROWTH_CURVES, "Open the tab to draw the curves",
                                          height=640), class_name="mb-2"),
        html.P([f"Compute-optimal bytes use a heuristic: {BYTES_PER_PARAM} training bytes per "
                "parameter, Chinchilla's ~20 tokens per parameter (Hoffmann et al. 2022) with one "
                "byte as one token and all parameters (every expert) counted. It was fitted to "
                "dense transformers on sub-word tokens, not to byte-level SSM/MoE models; treat "
                "it as an order of magnitude. Sizes come from umoec/sizing.py; memory is its "
                "per-process estimate (fp32 weights, gradients, optimizer state, activations)."],
               className="small text-muted mb-0"),
    ], id="growth-panel")


# -- pieces the callbacks fill in (pure) -------------------------------------------------------
def readout(value: int, base: int | None, note: str = "") -> list:
    out: list = [html.Strong(f"{value:,}")]
    if base is not None and base != value:
        out.append(html.Span(f" (config {base:,})", className="text-muted"))
    if note:
        out.append(html.Span(f" {note}", className="text-warning-emphasis"))
    return out


def _ratio(new: float, old: float | None) -> str:
    return f" (×{new / old:.3g} vs config)" if old and abs(new / old - 1) >= 5e-4 else ""


_card = partial(metric_card, size=5, widths={"xs": 6, "xl": 4})


def cards(s: Sizes, b: Sizes | None) -> list:
    """The six size cards; the first four say how far they are from the config's (`b`)."""
    planned = s.planned_bytes / s.optimal_bytes if s.optimal_bytes else 0.0
    return [
        _card("parameters", fmt_count(s.total), "total, every expert" + _ratio(s.total, b and b.total)),
        _card("active params / byte", fmt_count(s.active),
              f"{s.active / s.total:.0%} of the total" + _ratio(s.active, b and b.active)),
        _card("training FLOPs / byte", fmt_count(s.flops),
              "forward + backward" + _ratio(s.flops, b and b.flops)),
        _card("training memory", fmt_bytes(s.memory),
              "per process, estimate" + _ratio(s.memory, b and b.memory)),
        _card("bytes / step", f"{s.bytes_per_step:,}", "batch_size × seq_len, per process"),
        _card("compute-optimal bytes", fmt_bytes(s.optimal_bytes),
              f"{BYTES_PER_PARAM} × params (heuristic) = {s.optimal_steps:,.0f} steps, "
              f"{fmt_count(s.optimal_flops)}FLOP; the config trains {planned:.2g}× that"),
    ]
