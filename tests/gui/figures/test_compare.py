"""The Compare chart's legend helpers (gui/figures/compare.py); the chart itself is tested with
real runs in tests/gui/services/test_compare.py."""
from gui.figures.compare import short_keys


def test_short_keys_stay_unambiguous():
    assert short_keys(["optimizer.adamw.lr", "optimizer.muon.lr", "moe.top_k"]) == {
        "optimizer.adamw.lr": "adamw.lr", "optimizer.muon.lr": "muon.lr", "moe.top_k": "top_k"}
