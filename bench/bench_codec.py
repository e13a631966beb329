"""Entropy-coder throughput and order-2 codec bpb, side by side with constriction and classical tools.

Part 1, coders alone: encode and decode bytes/s of our rANS (32- and 64-bit states) and tANS at
B = 1, 64, 256 interleaved streams, on precomputed integer frequencies (random distributions of
mixed sharpness, symbols drawn from them), next to constriction's AnsCoder fed the same
distributions as floats, once in batch (all symbols in one call) and once step by step (B symbols
per call, as a decoder driven by a model must). The model does ~30,000 bytes/s, so a coder well
above that is not the bottleneck.

Part 2, the whole codec with the classical Order2Predictor (alone and with the match model) on
~1 MB of Python standard-library source: bpb (whole .umc file), compress/decompress bytes/s,
exact round trip; then gzip -9, xz -9e, zstd -19/-22 and brotli -11 on the same bytes.

Environment: BENCH_CODEC_BYTES (default 1000000) sets the text sample size.
"""
from __future__ import annotations

import os
import sysconfig
import time
from pathlib import Path

import constriction
import numpy as np

from umoec import units
from umoec.codec import CodecSettings, coders, compress, decompress
from umoec.codec.baselines import run_baselines
from umoec.codec.probs import logits_to_freqs, symbol_intervals
from umoec.predict.match import MatchMixer, MatchSettings
from umoec.predict.order2 import Order2Predictor

POOL = 32          # distinct steps of distributions, cycled


def text_sample(size: int) -> bytes:
    """Concatenated stdlib .py files in name order, cut to `size` bytes."""
    out, total = [], 0
    for path in sorted(Path(sysconfig.get_paths()["stdlib"]).glob("*.py")):
        out.append(path.read_bytes())
        total += len(out[-1])
        if total >= size:
            break
    return b"".join(out)[:size]


def coder_workload(lanes: int, symbols: int, n: int, seed: int = 0):
    """Frequencies (POOL, B, 256), per-step symbols (T, B) and their (start, freq) (T, B)."""
    rng = np.random.default_rng(seed)
    steps = max(1, symbols // lanes)
    logits = rng.standard_normal((POOL * lanes, 256)) * rng.uniform(0.5, 6.0, (POOL * lanes, 1))
    pool = logits_to_freqs(logits.astype(np.float32), n).reshape(POOL, lanes, 256)
    rows = pool[np.arange(steps) % POOL]                                   # view-free (T, B, 256)
    cum = np.cumsum(rows, axis=-1)
    sym = (cum <= rng.integers(0, 1 << n, (steps, lanes, 1))).sum(-1)
    st, fr = symbol_intervals(rows.reshape(-1, 256), sym.reshape(-1))
    return pool, sym, st.reshape(steps, lanes), fr.reshape(steps, lanes)


def time_coder(coder: str, precision: int, n: int, lanes: int, symbols: int) -> tuple[float, float, float]:
    pool, sym, starts, freqs = coder_workload(lanes, symbols, n)
    steps = len(sym)
    counts = np.full(steps, lanes)
    t0 = time.perf_counter()
    payload = coders.encode_block(coder, starts, freqs, counts, precision, n)
    t1 = time.perf_counter()
    dec = coders.block_decoder(coder, payload, lanes, precision, n)
    for t in range(steps):
        out = dec.decode(pool[t % POOL])
        assert out[0] == sym[t, 0]
    dec.finish()
    t2 = time.perf_counter()
    done = steps * lanes
    return done / (t1 - t0), done / (t2 - t1), units.bpb(len(payload), done)


def time_constriction(n_lanes: int, symbols: int, stepwise: bool) -> tuple[float, float, float]:
    pool, sym, _, _ = coder_workload(n_lanes, symbols, 24)
    steps = len(sym)
    probs = (pool / float(1 << 24)).astype(np.float32)                     # (POOL, B, 256)
    family = constriction.stream.model.Categorical(perfect=False)
    coder = constriction.stream.stack.AnsCoder()
    t0 = time.perf_counter()
    if stepwise:
        for t in range(steps - 1, -1, -1):
            coder.encode_reverse(sym[t].astype(np.int32), family, probs[t % POOL])
    else:
        all_probs = probs[np.arange(steps) % POOL].reshape(-1, 256)
        coder.encode_reverse(sym.reshape(-1).astype(np.int32), family, all_probs)
    words = coder.get_compressed()
    t1 = time.perf_counter()
    dec = constriction.stream.stack.AnsCoder(words)
    if stepwise:
        for t in range(steps):
            out = dec.decode(family, probs[t % POOL])
            assert out[0] == sym[t, 0]
    else:
        out = dec.decode(family, all_probs)
        assert out[0] == sym[0, 0]
    t2 = time.perf_counter()
    done = steps * n_lanes
    return done / (t1 - t0), done / (t2 - t1), 32 * len(words) / done


def coder_table(symbols: int = 1 << 16) -> list[tuple[str, int, float, float, float]]:
    rows = []
    for lanes in (1, 64, 256):
        for name, coder, precision, n in (("rANS 32-bit, n=16", "rans", 32, 16),
                                          ("rANS 64-bit, n=32", "rans", 64, 32),
                                          ("tANS n=12", "tans", 32, 12)):
            rows.append((name, lanes, *time_coder(coder, precision, n, lanes, symbols)))
        rows.append(("constriction AnsCoder, per step", lanes,
                     *time_constriction(lanes, symbols, stepwise=True)))
        rows.append(("constriction AnsCoder, batch", lanes,
                     *time_constriction(lanes, symbols, stepwise=False)))
    return rows


def codec_table(data: bytes, streams: int = 64) -> list[tuple[str, float, float, float]]:
    rows = []
    def order2_match():
        return MatchMixer(Order2Predictor(), MatchSettings.standard(5))

    for label, settings, make in (
            (f"order-2 + rANS (B={streams}, n=16)", CodecSettings(streams=streams), Order2Predictor),
            (f"order-2 + match + rANS (B={streams})", CodecSettings(streams=streams), order2_match),
            (f"order-2 + rANS, sharpening (B={streams})", CodecSettings(streams=streams, sharpening=True),
             Order2Predictor),
            (f"order-2 + tANS (B={streams}, n=12)", CodecSettings(streams=streams, coder="tans",
                                                                  prob_precision=12), Order2Predictor)):
        t0 = time.perf_counter()
        blob = compress(data, make(), settings)
        t1 = time.perf_counter()
        back = decompress(blob, make())
        t2 = time.perf_counter()
        assert back == data, "round trip failed"
        rows.append((label, units.bpb(len(blob), len(data)), len(data) / (t1 - t0), len(data) / (t2 - t1)))
    for r in run_baselines(data):
        rows.append((r.name, r.bpb, r.compress_bytes_per_s, r.decompress_bytes_per_s))
    return rows


def main() -> None:
    size = int(os.environ.get("BENCH_CODEC_BYTES", "1000000"))
    print("entropy coders on precomputed frequencies (2**16 symbols per configuration)")
    print(f"{'coder':34s} {'B':>4s} {'encode B/s':>13s} {'decode B/s':>13s} {'bits/byte':>9s}")
    for name, lanes, enc, dec, bits in coder_table():
        print(f"{name:34s} {lanes:4d} {enc:13,.0f} {dec:13,.0f} {bits:9.3f}")
    data = text_sample(size)
    print(f"\ncodec on {len(data):,} bytes of Python stdlib source (same bytes for every row)")
    print(f"{'compressor':40s} {'bpb':>7s} {'compress B/s':>14s} {'decompress B/s':>15s}")
    for label, bpb, cbs, dbs in codec_table(data):
        print(f"{label:40s} {bpb:7.3f} {cbs:14,.0f} {dbs:15,.0f}")


if __name__ == "__main__":
    main()
