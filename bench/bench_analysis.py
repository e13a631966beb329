"""Server time of every analysis-tab callback (routing, MoD, activations, brain) at 5k and 200k steps.

Writes two runs of the same geometry (8 blocks, all MoE with 16 experts, 4 of them MoD; rows every
10 steps, hidden states every 200) straight through umoec.metrics.TrainingDB, then drives each
callback through Dash's own HTTP endpoint (Flask test client: routing, callback, JSON encoding of
the figures) and prints milliseconds per call: cold (first visit, empty caches), steady (a refresh
tick with nothing new: the page already has this version) and live (a tick after 10 new logged
steps). The 200k run holds 2.56M routing rows; a responsive tab needs steady and live ticks to
stay flat as the run grows.

    python -m bench bench_analysis      (or: python -m bench.bench_analysis [--keep DIR])
"""
from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np

from umoec import config as C
from umoec.metrics import TrainingDB
from umoec.run import RunDir
from umoec.run.atomic import atomic_write_text

N_BLOCKS, N_EXPERTS, LOG_EVERY, EVAL_EVERY, N_SAMPLES = 8, 16, 10, 200, 200
MOD_BLOCKS = (1, 3, 5, 7)


# -- a synthetic run, written fast --------------------------------------------------------------
def run_config(steps: int, pattern: str = "Ss", mod: bool = True):
    return C.load_preset("tier1_micro", [f"model.n_blocks={N_BLOCKS}", f"model.block_pattern={pattern}",
                                         f"moe.n_routed={N_EXPERTS}", f"training.steps={steps}",
                                         f"logging.log_every={LOG_EVERY}",
                                         f"logging.eval_every={EVAL_EVERY}",
                                         f"mod.enabled={'true' if mod else 'false'}"])


def write_rows(db: TrainingDB, first: int, last: int, seed: int = 0, total: int | None = None) -> None:
    """Logged rows for steps first..last (multiples of LOG_EVERY) of every analysis table."""
    total = total or last
    rng = np.random.default_rng(seed + first)
    skew = np.random.default_rng(seed).normal(0, 1.0, (N_BLOCKS, N_EXPERTS))
    tau = max(50.0, 0.03 * total)
    with db.batch():
        for step in range(first - first % LOG_EVERY + (LOG_EVERY if first % LOG_EVERY else 0),
                          last + 1, LOG_EVERY):
            decay = np.exp(-step / tau)
            load = np.exp(skew * decay + rng.normal(0, 0.08, (N_BLOCKS, N_EXPERTS)))
            load /= load.sum(axis=1, keepdims=True)
            bias = -np.sign(skew) * 1e-3 * tau * (1.0 - decay)
            db.insert_train_metrics(step, loss=1.5, bpb=2.2, lr=1e-3, grad_norm=0.5,
                                    tokens_per_sec=1e5, bytes_seen=step * 4096, elapsed_s=step * 0.1)
            db.insert_routing(step, load.tolist(), bias.tolist(), list(range(N_BLOCKS)))
            frac = {b: float(0.5 + rng.normal(0, 0.01)) for b in MOD_BLOCKS}
            db.insert_mod_gates(step, frac, 0.5, {b: float(0.5 + rng.normal(0, 0.02)) for b in MOD_BLOCKS})
            for b in range(N_BLOCKS):
                m, s = 1.0 + 0.05 * b, 0.3 + 0.02 * b
                db.insert_activation_stat(step, b, mean=m, std=s, p1=m - 2.3 * s, p25=m - 0.67 * s,
                                          p50=m, p75=m + 0.67 * s, p99=m + 2.3 * s)
            if step % EVAL_EVERY == 0:
                for b in range(N_BLOCKS):
                    db.insert_hidden_states(step, b, rng.normal(0, 1 + b, (N_SAMPLES, 2)))


def write_run(root: Path, steps: int, seed: int = 0, pattern: str = "Ss", mod: bool = True) -> RunDir:
    """A completed run folder (config.yaml + metrics.db) with `steps` steps of analysis rows."""
    run = RunDir(root)
    root.mkdir(parents=True, exist_ok=True)
    atomic_write_text(run.config_path, C.dumps(run_config(steps, pattern, mod)))
    with TrainingDB(run.db_path) as db:
        db.insert_event("start", f"bench run of {steps} steps", step=0)
        if pattern and any(c in "Ss" for c in pattern):
            write_rows(db, 1, steps, seed, steps)
    return run


# -- calling a Dash callback the way the browser does -------------------------------------------
class DashClient:
    """POSTs to /_dash-update-component with the callback's declared inputs and state."""

    def __init__(self, app):
        self.app, self.http = app, app.server.test_client()
        self.http.get("/")  # runs Dash's first-request setup

    def key(self, first_output: str) -> str:
        """The callback whose output list starts with `first_output` ("id.prop")."""
        for key in self.app.callback_map:
            parts = key.strip(".").split("...")
            if parts[0].split("@")[0] == first_output:
                return key
        raise KeyError(first_output)

    def call(self, first_output: str, values: dict, changed: list[str]) -> tuple[int, dict]:
        """values: "id.prop" -> value for every input and state. Returns (status, response)."""
        key = self.key(first_output)
        spec = self.app.callback_map[key]

        def deps(items):
            return [{"id": d["id"], "property": d["property"],
                     "value": values.get(f"{d['id']}.{d['property']}")} for d in items]
        outputs = [{"id": o.split(".")[0], "property": o.split(".")[1].split("@")[0]}
                   for o in key.strip(".").split("...")]
        body = {"output": key, "outputs": outputs if len(outputs) > 1 else outputs[0],
                "inputs": deps(spec["inputs"]), "state": deps(spec["state"]), "changedPropIds": changed}
        resp = self.http.post("/_dash-update-component", json=body)
        if resp.status_code not in (200, 204):  # 204: PreventUpdate (nothing to redraw)
            raise RuntimeError(f"{first_output}: HTTP {resp.status_code}: {resp.data[:500]!r}")
        data = json.loads(resp.data) if resp.status_code == 200 else {}
        return resp.status_code, data.get("response", {})


def timed(fn, repeat: int = 1) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best * 1000.0, out


# -- the benchmark ------------------------------------------------------------------------------
def bench_run(runs_dir: Path, name: str, app_factory) -> list[tuple[str, float, float, float]]:
    """(callback, cold ms, steady ms, live ms) for one run."""
    from gui import ids
    from gui.pages.activations import ids as act
    from gui.pages.brain import ids as br
    from gui.pages.header import ids as hdr
    from gui.pages.mod import ids as md
    from gui.pages.routing import ids as rt
    client = DashClient(app_factory(runs_dir))
    run = RunDir(runs_dir / name)
    tabs = {"routing": ids.TAB_ROUTING, "mod": ids.TAB_MOD, "act": ids.TAB_ACTIVATIONS,
            "brain": ids.TAB_BRAIN}
    base = {f"{hdr.REFRESH}.n_intervals": 1, f"{ids.RUN_SELECT}.value": name,
            f"{rt.ROUTING_VALUE}.value": "load"}

    def controls(out_id: str, tab: str, state: dict):
        values = {**base, f"{ids.TABS}.active_tab": tab, **state}
        status, resp = client.call(out_id, values, [f"{hdr.REFRESH}.n_intervals"])
        return status, resp

    def version_of(resp, version_id):
        return resp.get(version_id, {}).get("data")

    # routing ------------------------------------------------------------------------------------
    def routing_controls(seen=None):
        return controls(f"{rt.ROUTING_STEP}.min", tabs["routing"],
                        {f"{rt.ROUTING_VERSION}.data": seen})
    _, resp = routing_controls()
    version = version_of(resp, rt.ROUTING_VERSION)
    step = resp[rt.ROUTING_STEP]["value"]
    block = resp[rt.ROUTING_BLOCK]["value"]
    expert = {"run": name, "block": block, "expert": 3}

    def heatmap(v):
        return client.call(f"{rt.ROUTING_HEATMAP}.figure",
                           {f"{rt.ROUTING_STEP}.value": step, f"{rt.ROUTING_VERSION}.data": v,
                            f"{rt.ROUTING_SELECTED}.data": expert}, [f"{rt.ROUTING_VERSION}.data"])

    def history(v):
        return client.call(f"{rt.ROUTING_HISTORY}.figure",
                           {f"{rt.ROUTING_VERSION}.data": v, f"{rt.ROUTING_BLOCK}.value": block,
                            f"{rt.ROUTING_VALUE}.value": "load", f"{rt.ROUTING_SELECTED}.data": expert},
                           [f"{rt.ROUTING_VERSION}.data"])

    def detail(v):
        return client.call(f"{rt.ROUTING_EXPERT_DETAIL}.figure",
                           {f"{rt.ROUTING_SELECTED}.data": expert, f"{rt.ROUTING_VERSION}.data": v},
                           [f"{rt.ROUTING_VERSION}.data"])

    def mod(seen=None):
        return controls(f"{md.MOD_MESSAGE}.children", tabs["mod"],
                        {f"{md.MOD_VERSION}.data": seen})

    def act_controls(seen=None):
        return controls(f"{act.ACT_STEP}.min", tabs["act"], {f"{act.ACT_VERSION}.data": seen})

    def brain_controls(seen=None):
        return controls(f"{br.BRAIN_STEP}.min", tabs["brain"],
                        {f"{br.BRAIN_VERSION}.data": seen, f"{br.BRAIN_BLOCK}.value": "all"})

    act_version = version_of(act_controls()[1], act.ACT_VERSION)
    brain_version = version_of(brain_controls()[1], br.BRAIN_VERSION)

    def act_views(v):
        return client.call(f"{act.ACT_DIST}.figure", {f"{act.ACT_STEP}.value": None,
                                                      f"{act.ACT_VERSION}.data": v},
                           [f"{act.ACT_VERSION}.data"])

    def brain_view(v, blk="all"):
        return client.call(f"{br.BRAIN_PCA}.figure", {f"{br.BRAIN_STEP}.value": None,
                                                       f"{br.BRAIN_BLOCK}.value": blk,
                                                       f"{br.BRAIN_VERSION}.data": v},
                           [f"{br.BRAIN_VERSION}.data"])

    cold = {}
    cold["routing controls"] = timed(lambda: routing_controls())[0]
    cold["routing heatmap"] = timed(lambda: heatmap(version))[0]
    cold["routing history + balance"] = timed(lambda: history(version))[0]
    cold["routing drill-down"] = timed(lambda: detail(version))[0]
    ms, (_, resp) = timed(lambda: mod())
    cold["mod (cards, current, history)"] = ms
    mod_version = version_of(resp, md.MOD_VERSION)
    cold["activations controls"] = timed(lambda: act_controls())[0]
    cold["activations dist + heatmap"] = timed(lambda: act_views(act_version))[0]
    cold["brain controls"] = timed(lambda: brain_controls())[0]
    cold["brain PCA (all blocks)"] = timed(lambda: brain_view(brain_version))[0]

    # steady: controls on a tick that finds nothing new (they stop at the version check);
    # figures redrawn from warm caches (what moving a slider or picking a block costs)
    steady = {
        "routing controls": timed(lambda: routing_controls(version), 3)[0],
        "mod (cards, current, history)": timed(lambda: mod(mod_version), 3)[0],
        "activations controls": timed(lambda: act_controls(act_version), 3)[0],
        "brain controls": timed(lambda: brain_controls(brain_version), 3)[0],
        "routing heatmap": timed(lambda: heatmap(version), 3)[0],
        "routing history + balance": timed(lambda: history(version), 3)[0],
        "routing drill-down": timed(lambda: detail(version), 3)[0],
        "activations dist + heatmap": timed(lambda: act_views(act_version), 3)[0],
        "brain PCA (all blocks)": timed(lambda: brain_view(brain_version), 3)[0],
    }

    # live: 10 more logged steps arrive, each figure is rebuilt once with the new version
    last = version["last"]
    with TrainingDB(run.db_path) as db:
        write_rows(db, last + 1, last + 10 * LOG_EVERY, total=last)
    live = {}
    live["routing controls"], (_, resp) = timed(lambda: routing_controls(version))
    version2 = version_of(resp, rt.ROUTING_VERSION)
    live["routing heatmap"] = timed(lambda: heatmap(version2))[0]
    live["routing history + balance"] = timed(lambda: history(version2))[0]
    live["routing drill-down"] = timed(lambda: detail(version2))[0]
    live["mod (cards, current, history)"] = timed(lambda: mod(mod_version))[0]
    live["activations controls"], (_, resp) = timed(lambda: act_controls(act_version))
    live["activations dist + heatmap"] = timed(lambda: act_views(version_of(resp, act.ACT_VERSION)))[0]
    live["brain controls"], (_, resp) = timed(lambda: brain_controls(brain_version))
    live["brain PCA (all blocks)"] = timed(
        lambda: brain_view(version_of(resp, br.BRAIN_VERSION) or brain_version))[0]
    return [(k, cold[k], steady[k], live[k]) for k in cold]


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m bench.bench_analysis", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--keep", type=Path, help="write the runs here and keep them (default: a temp dir)")
    p.add_argument("--steps", type=int, nargs="+", default=[5_000, 200_000])
    a = p.parse_args(argv or [])
    from gui.app import create_app
    with tempfile.TemporaryDirectory() as tmp:
        base = a.keep or Path(tmp)
        for steps in a.steps:
            runs_dir = base / f"bench{steps}"
            name = "big"
            t0 = time.perf_counter()
            if not (runs_dir / name / "metrics.db").exists():
                write_run(runs_dir / name, steps)
            made = time.perf_counter() - t0
            rows = steps // LOG_EVERY * N_BLOCKS * N_EXPERTS
            print(f"\n{steps:,} steps: {rows:,} routing rows ({N_BLOCKS} blocks x {N_EXPERTS} experts "
                  f"every {LOG_EVERY} steps), written in {made:.1f} s")
            print(f"{'callback':34s} {'cold ms':>9s} {'steady ms':>10s} {'live ms':>9s}")
            for label, cold, steady, live in bench_run(runs_dir, name, create_app):
                print(f"{label:34s} {cold:9.1f} {steady:10.1f} {live:9.1f}")
    print("\ncold: first visit (empty caches). steady: controls on a refresh tick with nothing "
          "new (the only work a tick does then);\nfigures redrawn from warm caches (moving a "
          f"slider, picking a block). live: a tick after {10 * LOG_EVERY} more steps were logged.")


if __name__ == "__main__":
    import sys
    main(sys.argv[1:])
