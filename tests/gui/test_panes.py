"""Tabs' panes are built when first shown (gui/panes.py): the page starts with the Training
pane only, and every callback still names components of the full layout."""
import json

from gui import ids, panes
from gui.pages.compare import ids as compare_ids
from gui.pages.training import ids as training_ids
from tests.gui.test_layers import id_counts


def _ids(node) -> set:
    return set(id_counts(node))


def _app(tmp_path):
    from gui.app import create_app
    return create_app(tmp_path / "runs", data_dir=tmp_path / "data")


def test_the_page_starts_with_the_first_pane_built_and_the_others_empty(tmp_path):
    app = _app(tmp_path)
    page, full = _ids(app.layout()), _ids(app.validation_layout)
    assert training_ids.TRAINING_LOSS in page
    assert ids.COMPRESS_MODEL not in page and compare_ids.COMPARE_RUNS not in page
    assert {ids.pane(t) for t in ids.TAB_IDS} <= page          # every pane's slot is there
    assert ids.COMPRESS_MODEL in full and ids.GEN_CHECKPOINT in full
    others = set().union(*(_ids(panes.build(t).to_plotly_json())
                           for t in ids.TAB_IDS if t != panes.FIRST))
    assert full - page == others and len(others) > 150


def test_a_pane_is_built_once_the_first_time_its_tab_is_shown():
    built, mounted = panes.mount(ids.TAB_COMPRESSION, [panes.FIRST])
    assert list(built) == [ids.TAB_COMPRESSION] and mounted == [panes.FIRST, ids.TAB_COMPRESSION]
    assert {ids.COMPRESS_MODEL, ids.pick_seen(ids.COMPRESS_MODEL)} <= _ids(
        built[ids.TAB_COMPRESSION].to_plotly_json())
    assert panes.mount(ids.TAB_COMPRESSION, mounted) == ({}, mounted)   # kept, not rebuilt
    assert panes.mount(panes.FIRST, None) == ({}, [panes.FIRST])
    assert panes.mount("no-such-tab", mounted) == ({}, mounted)
    assert panes.pane_class(ids.TAB_RUNS, ids.TAB_RUNS) == panes.PANE and \
        panes.pane_class(panes.FIRST, ids.TAB_RUNS) == panes.HIDDEN


def test_every_callback_names_components_of_the_full_layout_and_at_most_one_pane(tmp_path):
    """Callbacks are checked by Dash on the full layout, not on a page that lacks the unbuilt
    panes: what the page needs is checked here. A callback that reads or writes two panes would
    wait for both to be built; one that writes into a pane and elsewhere, with no input in that
    pane, would run before the pane is built and fail on its missing outputs (seen: the
    pickers' stores, now inside their panes)."""
    app = _app(tmp_path)
    full = app.validation_layout.to_plotly_json()
    known = _ids(full)
    pane_of = {}
    for tab in ids.TAB_IDS:
        for i in _ids(panes.build(tab).to_plotly_json()):
            pane_of[i] = tab
    for tab, pickers in panes.PICKERS.items():
        assert all(pane_of[p] == tab and pane_of[ids.pick_seen(p)] == tab for p in pickers)
    deps = app.server.test_client().get("/_dash-dependencies").get_json()
    assert deps
    seen_stores = {i for i in known if i.endswith(ids.pick_seen(""))}
    assert seen_stores == {ids.pick_seen(p) for ps in panes.PICKERS.values() for p in ps}
    for dep in deps:
        outputs = [o.split("@")[0].rsplit(".", 1)[0] for o in dep["output"].strip(".").split("...")]
        names = outputs + [json.dumps(x["id"], sort_keys=True) if isinstance(x["id"], dict)
                           else x["id"] for x in dep["inputs"] + dep["state"]]
        plain = [n for n in names if not n.startswith("{")]       # pattern ids match at run time
        assert all(n in known for n in plain), (dep["output"], [n for n in plain if n not in known])
        assert len({pane_of[n] for n in plain if n in pane_of}) <= 1, dep["output"]
        inputs = [x["id"] for x in dep["inputs"] if isinstance(x["id"], str)]
        written = {pane_of[o] for o in outputs if o in pane_of} - {panes.FIRST}   # always built
        if written and any(o not in pane_of for o in outputs):
            assert any(pane_of.get(i) in written for i in inputs), dep["output"]
