"""Layout defaults that must hold before the first refresh reaches the page."""
from gui import ids
from gui.panels import eval_panel


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
