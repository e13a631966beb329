"""What the benches that set `umc` beside the strong classical compressors share: which peers
to run, and their columns."""
from __future__ import annotations

from umoec.codec.baselines import PeerFailed, peers, run_baseline, skipped_peers


def strong() -> tuple[list[str], list[str]]:
    """(the installed strong peers, those not installed), zpaq -m4 left out (-m5 is its best)."""
    return ([n for n in peers() if n != "zpaq -m4"],
            sorted(set(skipped_peers()) - {"zpaq -m4"}))


def columns(data: bytes, names: list[str]) -> dict[str, float]:
    """Bits per byte of each peer for `data`; one that fails on it is nan, its reason printed
    (a peer's own failure: said, not a crash)."""
    out = {}
    for name in names:
        try:
            out[name] = run_baseline(name, data).bpb
        except PeerFailed as exc:
            print(f"  ({exc})")
            out[name] = float("nan")
    return out


def print_row(name: str, width: int, size: int, r: dict[str, float]) -> None:
    """One file's line: every column of `r` in bits per byte, then the speed of the cm run that
    took r["cm s"] seconds."""
    seconds = r.pop("cm s")
    cells = "  ".join(f"{k} {v:.3f}" for k, v in r.items())
    print(f"{name:{width}s} {size:>9,} B  {cells}  (cm {size / seconds:,.0f} B/s)", flush=True)
