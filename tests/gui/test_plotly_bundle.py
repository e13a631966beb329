"""The cockpit serves its own partial plotly.js (gui/assets/05_plotly.min.js, built by
scripts/plotly/build.sh): it must be the plotly.js version the Python plotly package ships (the
figures' schema) and hold every trace type that gui/ draws."""
import re

from plotly.offline import get_plotlyjs_version

from tests.conftest import ROOT

BUNDLE = ROOT / "gui" / "assets" / "05_plotly.min.js"
ENTRY = ROOT / "scripts" / "plotly" / "entry.js"
NOT_TRACES = {"Figure", "Layout", "FigureWidget", "Frame"}


def registered() -> set[str]:
    """Trace types in the bundle: the core's scatter and what entry.js registers."""
    names = set(re.findall(r"require\('plotly\.js/lib/(\w+)'\)", ENTRY.read_text()))
    return {"scatter"} | (names - {"core"})


def drawn() -> set[str]:
    """Trace types gui/ builds (go.Scatter, go.Heatmap, ...), lower-cased as plotly.js names them."""
    found = set()
    for path in (ROOT / "gui").rglob("*.py"):
        found |= {n.lower() for n in re.findall(r"\bgo\.([A-Z]\w+)\(", path.read_text())}
    return found - {n.lower() for n in NOT_TRACES}


def test_the_bundle_is_the_version_python_plotly_ships():
    head = BUNDLE.read_text()[:300]
    assert f"plotly.js {get_plotlyjs_version()} " in head, head[:200]
    assert BUNDLE.stat().st_size < 2_500_000            # partial: the full bundle is 4.8 MB


def test_every_trace_type_the_cockpit_draws_is_in_the_bundle():
    used = drawn()
    assert {"scatter", "scattergl", "heatmap", "bar"} <= used
    assert used - registered() == set(), "add it to scripts/plotly/entry.js and rebuild"
    text = BUNDLE.read_text()
    for name in registered():
        assert f'name:"{name}"' in text, name
