"""Layout defaults that must hold before the first refresh reaches the page."""
from gui.pages.evaluation import ids
from gui.pages.evaluation import layout as eval_panel


def _find(node, id_):
    if getattr(node, "id", None) == id_:
        return node
    children = getattr(node, "children", None)
    for child in children if isinstance(children, (list, tuple)) else [children]:
        if child is not None and hasattr(child, "to_plotly_json"):
            hit = _find(child, id_)
            if hit is not None:
                return hit
    return None


def test_evaluation_cannot_be_started_before_its_checkpoints_are_known():
    button = _find(eval_panel.layout(), ids.EVAL_ENWIK8_BTN)
    assert button is not None and button.disabled is True


def test_every_chart_with_a_toolbar_saves_its_png_under_its_own_name(tmp_path):
    """Not plotly's default "newplot.png": each chart's PNG is named after the chart."""
    from dash import dcc

    from gui.app import create_app
    app = create_app(tmp_path / "runs", data_dir=tmp_path / "data")
    layout = app.validation_layout    # every pane built (the page builds them when shown)

    def walk(node):
        yield node
        children = getattr(node, "children", None)
        for child in children if isinstance(children, (list, tuple)) else [children]:
            if child is not None and hasattr(child, "to_plotly_json"):
                yield from walk(child)

    graphs = [g for g in walk(layout) if isinstance(g, dcc.Graph)]
    shown = [g for g in graphs if (getattr(g, "config", None) or {}).get("displayModeBar") is not False]
    assert len(shown) >= 8, [g.id for g in graphs]
    names = [g.config["toImageButtonOptions"]["filename"] for g in shown]
    assert all(n.startswith("umoec-") for n in names) and len(set(names)) == len(names), names
