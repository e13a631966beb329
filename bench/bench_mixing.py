"""What the context-mixing stage adds: every profile with rANS (the network's distribution coded
as it is) and with the mixing stage (codec/cm.py), the model-free cm profile and the strong
classical peers, on the same held-out bytes, side by side in one run (docs/compress.md).

Data: held-out Python and prose of the shipped default model's corpus (bench_models.kinds),
BENCH_MIX_BYTES each (default 100,000). Bits per byte and compress bytes/s (one round trip per
cell is checked). Run with nothing else on the machine.
"""
from __future__ import annotations

import dataclasses
import os
import time

from bench.bench_models import kinds
from umoec import units
from umoec.codec.baselines import peers, run_baseline
from umoec.compress import profiles
from umoec.compress.api import compress_bytes, decompress_bytes, open_model

NETWORK = ("turbo", "fast", "balanced")
PEERS = ("PPMd -o16", "zpaq -m5", "paq9a")


def main() -> None:
    limit = int(os.environ.get("BENCH_MIX_BYTES", "100000"))
    model = open_model(None)
    for name in NETWORK:  # the same profile coded with rANS, for the comparison only
        profiles.PROFILES[f"{name}/rans"] = dataclasses.replace(
            profiles.PROFILES[name], name=f"{name}/rans", coder="")
    cols = [c for n in NETWORK for c in (f"{n}/rans", n)] + ["cm"]
    have = [p for p in PEERS if p in peers()]
    try:
        print(f"model {model.label()}; bits per byte, then compress bytes/s; {limit:,} bytes each")
        print(f"{'kind':7s} " + " ".join(f"{c:>15s}" for c in cols + have))
        for kind in ("python", "prose"):
            raw = kinds(limit)[kind]
            bpb, speed = [], []
            for c in cols:
                t0 = time.perf_counter()
                blob = compress_bytes(raw, model, profile=c)
                dt = time.perf_counter() - t0
                if decompress_bytes(blob, model) != raw:
                    raise SystemExit(f"{kind} {c}: round trip failed")
                bpb.append(units.bpb(len(blob), len(raw)))
                speed.append(len(raw) / dt)
            for p in have:
                r = run_baseline(p, raw)
                bpb.append(r.bpb)
                speed.append(r.compress_bytes_per_s)
            print(f"{kind:7s} " + " ".join(f"{v:15.3f}" for v in bpb))
            print(f"{'B/s':7s} " + " ".join(f"{v:15,.0f}" for v in speed), flush=True)
    finally:
        for name in NETWORK:
            profiles.PROFILES.pop(f"{name}/rans", None)


if __name__ == "__main__":
    main()
