"""Model throughput, side by side with a plain PyTorch GRU of the same active parameter count.

Prints, on the threads torch uses here (2 on the reference machine):
  1. the measured fp32 matmul peak (GFLOP/s), the yardstick of MFU;
  2. training bytes/s of tier1_micro (forward + backward + AdamW step, batch_size x seq_len of
     the tier) eager and with torch.compile, and of the GRU baseline; MFU of each;
  3. step-form bytes/s (the codec's path) at B = 1, 64, 256, and the GRU cell stepping;
  4. unless --quick: cascade on/off after a short training run on Python's own sources
     (validation bpb under the codec's rules, step-form speed).
Every timing is the best and the median of several repeats, because the machine may be shared.

    python -m bench bench_model            # everything (a few minutes)
    python -m bench.bench_model --quick    # no torch.compile, no training comparison
    python -m bench.bench_model --quick --threads 1 --set model.d_model=96   # other settings
"""
from __future__ import annotations

import argparse
import statistics
import sysconfig
import time
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F

from umoec import config as C
from umoec import sizing
from umoec.model import build_model
from umoec.units import nats_to_bits


def timed(fn, repeats: int, warmup: int = 2) -> tuple[float, float]:
    """(best, median) wall seconds of fn() over repeats, after warmup calls."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times), statistics.median(times)


def matmul_peak(rounds: int = 3) -> float:
    """Best fp32 GFLOP/s of a few square-ish matmuls (the MFU denominator), best of several
    rounds a second apart: on a shared machine one round can land on a busy core."""
    best = 0.0
    for r in range(rounds):
        if r:
            time.sleep(1.0)
        for n in (256, 512, 1024):
            a, b = torch.randn(4096, n), torch.randn(n, n)
            t, _ = timed(lambda a=a, b=b: a @ b, repeats=10)
            best = max(best, 2 * 4096 * n * n / t / 1e9)
    return best


# -- the GRU baseline --------------------------------------------------------------------------
class GRUBaseline(nn.Module):
    """Embedding -> 2-layer GRU -> Linear: the plain PyTorch byte model to beat."""

    def __init__(self, hidden: int, layers: int = 2):
        super().__init__()
        self.embed = nn.Embedding(256, hidden)
        self.gru = nn.GRU(hidden, hidden, num_layers=layers, batch_first=True)
        self.head = nn.Linear(hidden, 256)

    def forward(self, x, targets):
        h, _ = self.gru(self.embed(x))
        return F.cross_entropy(self.head(h).flatten(0, 1), targets.flatten())

    @torch.no_grad()
    def step(self, byte, state):
        h, state = self.gru(self.embed(byte).unsqueeze(1), state)
        return self.head(h[:, 0]), state


def gru_with_params(target: float) -> GRUBaseline:
    """The GRU whose parameter count is closest to target."""
    def count(h):
        return 256 * h + 2 * (3 * (2 * h * h) + 6 * h) + 257 * h
    hidden = min(range(16, 2048), key=lambda h: abs(count(h) - target))
    return GRUBaseline(hidden)


# -- measurements ------------------------------------------------------------------------------
def train_rate(model, batch: int, seq: int, repeats: int, umoec_model: bool):
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x = torch.randint(0, 256, (batch, seq))
    y = torch.randint(0, 256, (batch, seq))
    target = model if not hasattr(model, "_orig_mod") else model._orig_mod

    def step():
        out = model(x, targets=y) if umoec_model else model(x, y)
        loss = out.loss if umoec_model else out
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if umoec_model:
            target.update_balancing_bias(out)

    best, med = timed(step, repeats)
    return batch * seq / best, batch * seq / med


def step_rate(model, batch: int, n: int, gru: bool = False, step_fn=None):
    x = torch.randint(0, 256, (batch,))
    if gru:
        state = torch.zeros(model.gru.num_layers, batch, model.gru.hidden_size)
    else:
        state = model.init_state(batch)
    step_fn = step_fn or model.step
    holder = [state]

    def run():
        for _ in range(n):
            _, holder[0] = step_fn(x, holder[0])

    best, med = timed(run, repeats=3, warmup=1)
    return batch * n / best, batch * n / med


def fmt(rate: tuple[float, float]) -> str:
    return f"{rate[0]:>10,.0f} {rate[1]:>10,.0f}"


# -- cascade on/off after a short training run -------------------------------------------------
def corpus(n_bytes: int) -> bytes:
    """Python's standard-library sources, sorted: the same bytes on every machine with 3.x."""
    root = Path(sysconfig.get_paths()["stdlib"])
    out = bytearray()
    for path in sorted(root.glob("*.py")):
        out += path.read_bytes()
        if len(out) >= n_bytes:
            break
    return bytes(out[:n_bytes])


def train_briefly(cfg, data: torch.Tensor, steps: int, seed: int = 0):
    torch.manual_seed(seed)
    model = build_model(cfg)
    muon, decay, no_decay = model.param_groups()
    o = cfg.optimizer
    opts = [torch.optim.Muon(muon, lr=o.muon.lr, momentum=o.muon.momentum, nesterov=True),
            torch.optim.AdamW([{"params": decay, "weight_decay": o.adamw.weight_decay},
                               {"params": no_decay, "weight_decay": 0.0}], lr=o.adamw.lr,
                              betas=tuple(o.adamw.betas))]
    B, T = cfg.training.batch_size, cfg.training.seq_len
    gen = torch.Generator().manual_seed(seed)
    t0 = time.perf_counter()
    for i in range(steps):
        lr_mult = min(1.0, (i + 1) / 20)
        for opt in opts:
            for g in opt.param_groups:
                g.setdefault("peak", g["lr"])
                g["lr"] = g["peak"] * lr_mult
        starts = torch.randint(0, len(data) - T - 1, (B,), generator=gen)
        chunk = data[starts[:, None] + torch.arange(T + 1)]
        out = model(chunk[:, :-1], targets=chunk[:, 1:])
        out.loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        for opt in opts:
            opt.step()
            opt.zero_grad(set_to_none=True)
        model.update_balancing_bias(out)
    return model, time.perf_counter() - t0


@torch.no_grad()
def val_bpb(model, data: torch.Tensor, seq: int, rows: int) -> tuple[float, dict]:
    model.eval()
    idx = torch.arange(rows)[:, None] * seq + torch.arange(seq + 1)
    chunk = data[idx]
    out = model(chunk[:, :-1], targets=chunk[:, 1:])
    stats = {"cascade alone": out.cascade_fraction,
             "exited": sum(out.exit_fraction.values()),
             "mod infer": statistics.mean(out.mod_fraction_inference.values() or [0.0])}
    return nats_to_bits(out.head_losses["final"].item()), stats


def cascade_comparison(steps: int, overrides: list[str]) -> None:
    raw = corpus(1_200_000)
    data = torch.tensor(list(raw), dtype=torch.long)
    train, val = data[:1_000_000], data[1_000_000:]
    print(f"\ncascade on/off: tier1_micro trained {steps} steps on {len(train):,} bytes of "
          f"Python sources; val = next {len(val):,} bytes, codec rules (eval mode)")
    print(f"{'cascade':10s} {'val bpb':>8s} {'train s':>8s} {'step B=64 bytes/s':>18s} "
          f"{'alone':>6s} {'exited':>7s}")
    for on in (True, False):
        cfg = C.load_preset("tier1_micro", overrides + [f"cascade.enabled={str(on).lower()}"])
        model, secs = train_briefly(cfg, train, steps)
        bpb, st = val_bpb(model, val, cfg.training.seq_len, 64)
        rate = step_rate(model, 64, 100)
        alone = f"{st['cascade alone']:.1%}" if st["cascade alone"] is not None else "-"
        print(f"{'on' if on else 'off':10s} {bpb:8.3f} {secs:8.1f} {rate[0]:18,.0f} {alone:>6s} "
              f"{st['exited']:7.1%}")


# -- main --------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="bench_model")
    ap.add_argument("--quick", action="store_true", help="skip torch.compile and training")
    ap.add_argument("--steps", type=int, default=150, help="training steps per cascade variant")
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="override a tier1_micro field, e.g. model.d_model=96")
    args = ap.parse_args(argv or [])
    if args.threads:
        torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    cfg = C.load_preset("tier1_micro", args.set)
    B, T = cfg.training.batch_size, cfg.training.seq_len
    peak = matmul_peak()
    total, active = sizing.total_params(cfg), sizing.active_params_per_byte(cfg)
    model = build_model(cfg)
    gru = gru_with_params(active)
    gru_params = sum(p.numel() for p in gru.parameters())
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads; fp32 matmul peak "
          f"{peak:.0f} GFLOP/s")
    name = "tier1_micro" + (" with " + " ".join(args.set) if args.set else "")
    print(f"{name}: {total:,} parameters, {active:,.0f} active per byte, "
          f"{sizing.flops_per_byte(cfg) / 1e6:.2f} MFLOP per byte (training); GRU baseline: "
          f"hidden {gru.gru.hidden_size}, {gru_params:,} parameters")

    print(f"\ntraining, batch {B} x {T} bytes, fwd + bwd + AdamW   (best / median bytes/s)")
    print(f"{'what':34s} {'best':>10s} {'median':>10s} {'MFU':>6s}")
    rows = [("tier1_micro eager", train_rate(model, B, T, 6, True), sizing.flops_per_byte(cfg)),
            ("GRU baseline (same active params)", train_rate(gru, B, T, 6, False),
             6 * gru_params)]
    if not args.quick:
        compiled = torch.compile(build_model(cfg))
        t0 = time.perf_counter()
        train_rate(compiled, B, T, 1, True)
        print(f"(torch.compile of tier1_micro took {time.perf_counter() - t0:.0f} s)")
        rows.insert(1, ("tier1_micro torch.compile", train_rate(compiled, B, T, 6, True),
                        sizing.flops_per_byte(cfg)))
    for name, rate, flops in rows:
        print(f"{name:34s} {fmt(rate)} {rate[0] * flops / 1e9 / peak:6.1%}")

    print("\nstep form (the codec's path), bytes/s        (best / median)")
    print(f"{'what':34s} {'best':>10s} {'median':>10s}")
    model.eval()
    for batch, n in ((1, 200), (64, 100), (256, 50)):
        print(f"{f'tier1_micro step, B={batch}':34s} {fmt(step_rate(model, batch, n))}")
    for batch, n in ((1, 200), (256, 50)):
        print(f"{f'GRU step, B={batch}':34s} {fmt(step_rate(gru, batch, n, gru=True))}")
    if not args.quick:
        cstep = torch.compile(model.step)
        step_rate(model, 256, 5, step_fn=cstep)
        print(f"{'tier1_micro step, B=256, compiled':34s} "
              f"{fmt(step_rate(model, 256, 50, step_fn=cstep))}")
        cascade_comparison(args.steps, args.set)


if __name__ == "__main__":
    import sys
    main(sys.argv[1:])
