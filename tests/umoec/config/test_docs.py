"""docs/config.md is generated from the schema and lists every field."""
from umoec import config as C
from umoec.config.docs import render


def test_docs_are_current(root):
    assert (root / "docs" / "config.md").read_text() == render(), \
        "docs/config.md is stale: run `make docs`"


def test_docs_list_every_field():
    text = render()
    for f in C.all_fields():
        assert f"`{f.key}`" in text
