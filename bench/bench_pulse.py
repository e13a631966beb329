"""What an idle refresh tick costs the cockpit's server: the page pulse against what one tick ran
before it, side by side, through Dash's own request handler (Flask test client, no network).

A runs folder of RUNS finished runs (each with a 2,000-step metrics.db) and one selected run of
20,000 steps. "before" is what each tick of an idle page ran without the pulse: run list, status
badge, run controls, notifications, the Training tab's refresh (incremental, carrying its state)
and the checkpoint card, one request each. "pulse" is the one request a tick now makes when
nothing changed (answered 204, no body). Target: <= 5 ms and a few bytes per idle tick.
"""
from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.bench_analysis import DashClient  # noqa: E402
from bench.bench_gui import Page, write_run  # noqa: E402
from umoec.run import RunDir, RunStatus  # noqa: E402

RUNS = 40
ROUNDS = 50


def finished(run: RunDir, steps: int) -> None:
    write_run(run, steps)
    RunStatus(state="completed", step=steps, total_steps=steps, kind="simulate", pid=0,
              host="bench-host-elsewhere").write(run.status_path)


def header_calls(client: DashClient, run: str) -> list[tuple[str, dict]]:
    tick = {"header-tick.data": 3, "run-select.value": run}
    return [("run-select.options", tick), ("run-status.children", tick),
            ("notify-seen.data", tick), ("config-status.children", tick),
            ("checkpoint-export-status.children", {**tick, "main-tabs.active_tab": "tab-training"})]


def timed_call(client: DashClient, output: str, values: dict) -> tuple[float, int]:
    t0 = time.perf_counter()
    _, resp = client.call(output, values, [next(iter(values))])
    return time.perf_counter() - t0, len(json.dumps(resp)) if resp else 0


def main() -> None:
    from gui.app import create_app
    with tempfile.TemporaryDirectory() as tmp:
        runs = Path(tmp)
        t0 = time.perf_counter()
        for i in range(RUNS):
            finished(RunDir(runs / f"run{i:02d}"), 2_000)
        finished(RunDir(runs / "big"), 20_000)
        print(f"wrote {RUNS + 1} runs in {time.perf_counter() - t0:.1f} s")
        app = create_app(runs, data_dir=runs / "data")
        client, page = DashClient(app), Page(app)
        page.refresh()  # the first load; ticks after it are incremental
        pulse_values = {"refresh-interval.n_intervals": 1, "run-select.value": "big",
                        "refresh-pulse.data": None}
        _, first = client.call("refresh-pulse.data", pulse_values, ["refresh-interval.n_intervals"])
        pulse_values["refresh-pulse.data"] = first["refresh-pulse"]["data"]

        before, before_bytes, pulse, pulse_bytes = [], [], [], []
        for _ in range(ROUNDS):
            total, size = 0.0, 0
            for output, values in header_calls(client, "big"):
                dt, n = timed_call(client, output, values)
                total, size = total + dt, size + n
            dt, n = page.refresh()
            before.append(total + dt)
            before_bytes.append(size + n)
            t0 = time.perf_counter()
            r = client.http.post("/_dash-update-component", json=_pulse_body(app, pulse_values))
            pulse.append(time.perf_counter() - t0)
            pulse_bytes.append(len(r.data))
            assert r.status_code == 204, (r.status_code, r.data[:200])
        med = lambda xs: 1000 * statistics.median(xs)  # noqa: E731
        p95 = lambda xs: 1000 * sorted(xs)[int(0.95 * len(xs))]  # noqa: E731
        print(f"{'idle tick, server side':28} {'median ms':>10} {'p95 ms':>8} {'requests':>9} "
              f"{'bytes':>7}")
        print(f"{'before (6 callbacks)':28} {med(before):10.2f} {p95(before):8.2f} {6:9d} "
              f"{int(statistics.median(before_bytes)):7d}")
        print(f"{'pulse (unchanged: 204)':28} {med(pulse):10.2f} {p95(pulse):8.2f} {1:9d} "
              f"{int(statistics.median(pulse_bytes)):7d}")
        print(f"ratio before/pulse: {med(before) / med(pulse):.1f}x time; target pulse <= 5 ms: "
              f"{'met' if med(pulse) <= 5 else 'NOT met'}")


def _pulse_body(app, values: dict) -> dict:
    key = next(k for k in app.callback_map if k.startswith("refresh-pulse.data"))
    spec = app.callback_map[key]
    deps = lambda items: [{"id": d["id"], "property": d["property"],  # noqa: E731
                           "value": values.get(f"{d['id']}.{d['property']}")} for d in items]
    return {"output": key, "outputs": {"id": "refresh-pulse", "property": "data"},
            "inputs": deps(spec["inputs"]), "state": deps(spec["state"]),
            "changedPropIds": ["refresh-interval.n_intervals"]}


if __name__ == "__main__":
    main()
