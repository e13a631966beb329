"""Links between the README and docs/ land on a heading that exists (a renamed section breaks
the links to it silently otherwise). Anchors are GitHub's: the heading in lower case, without
punctuation, spaces as hyphens, a repeated heading numbered -1, -2, ..."""
import re
from pathlib import Path

from tests.conftest import ROOT

HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*$", re.M)
LINK = re.compile(r"\]\(([\w./-]*\.md)?#([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.M | re.S)


def anchor(heading: str) -> str:
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(text: str) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    for heading in HEADING.findall(FENCE.sub("", text)):
        a = anchor(heading)
        n = seen.get(a, 0)
        seen[a] = n + 1
        out.add(a if n == 0 else f"{a}-{n}")
    return out


def test_anchor_follows_github():
    assert anchor("Versions 8 and 9: primed stages with a 2^24-slot table") == \
        "versions-8-and-9-primed-stages-with-a-224-slot-table"
    assert anchor("The match model (`match.MatchMixer`)") == "the-match-model-matchmatchmixer"
    assert anchors("# A\n## A\n```\n# B\n```\n") == {"a", "a-1"}


def test_every_link_between_the_docs_lands_on_a_heading():
    files = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    texts = {f.resolve(): f.read_text(encoding="utf-8") for f in files}
    known = {f: anchors(t) for f, t in texts.items()}
    broken = []
    for f, text in texts.items():
        for target, frag in LINK.findall(FENCE.sub("", text)):
            dest = (f.parent / target).resolve() if target else f
            if dest in known and frag not in known[dest]:
                broken.append(f"{Path(f).relative_to(ROOT)}: {target}#{frag}")
    assert not broken, broken
