"""The surprisal view (gui/surprisal.py; no torch): characters, colour bins, spans, summary."""
from gui import surprisal as S
from tests.conftest import ROOT


def test_characters_group_utf8_and_escape_the_rest():
    data = "a\u00e9\n".encode() + b"\xff\x07"
    chars = S.split_chars(data)
    assert [(s, n) for s, n, _ in chars] == [(0, 1), (1, 2), (3, 1), (4, 1), (5, 1)]
    assert [t for _, _, t in chars] == ["a", "\u00e9", "\u23ce\n", "\\xff", "\\x07"]


def test_bins_and_palette_match_the_stylesheet():
    assert [S.bin_of(b) for b in (0.0, 0.49, 0.5, 7.9, 8.0, 30.0, float("inf"))] == \
        [0, 0, 1, 15, 16, 16, 16]
    css = (ROOT / "gui" / "assets" / "20_datasets_generate_notify.css").read_text()
    for k, colour in enumerate(S.PALETTE):
        assert f".sp-{k} {{ background-color: {colour};" in css
    assert len(S.PALETTE) == S.N_BINS


def test_render_and_summary():
    data = "h\u00e9".encode()
    bits = [1.0, 3.0, 5.0]
    spans = S.render(data, bits)
    assert [sp.className for sp in spans] == ["sp-2", "sp-8"]   # é: mean of 3 and 5 bits
    assert "2 bytes, 8.00 bits" in spans[1].title
    s = S.summary(data, bits)
    assert s["bits"] == 9.0 and s["bpb"] == 3.0 and s["ideal_bytes"] == 2
    assert s["worst"][0] == ("\u00e9", 8.0)
    assert [sp.className for sp in S.render(data, bits[:1])] == ["sp-2", "sp-none"]
