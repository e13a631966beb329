"""The training tab's refresh callback on a 200,000-step run, measured server-side.

Writes a run with one train_metrics row per step (200,000 rows, plus validation every 200 steps,
four head losses per step, a training.log and checkpoints), then times, through Dash's own
request handler (Flask test client: callback + JSON serialisation, no network):

  first load        the page opens: every row read, EMA on all of them, each trace downsampled
                    (MinMaxLTTB) to ~2,000 points, figures serialised;
  incremental tick  20 new rows since the last tick: only they are read and sent (dash.Patch);
  idle tick         no new rows;

next to a plain `pandas.read_sql("SELECT * FROM train_metrics")` of the same table and Forge
Studio's published figures (200k-row ingest 1.1 s; 200k -> 1,200-point snapshot < 250 ms).
Targets: tick < 50 ms, first load < 500 ms.
"""
from __future__ import annotations

import json
import math
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import pandas as pd  # noqa: E402

from umoec.metrics import TrainingDB  # noqa: E402
from umoec.metrics.db import connect  # noqa: E402
from umoec.run import RunDir, RunStatus  # noqa: E402
from umoec.units import LN2  # noqa: E402

STEPS = 200_000
TICK_ROWS = 20
HEADS = ("final", "exit_1", "mtp_1", "cascade")


def _rows(start: int, stop: int):
    for s in range(start, stop):
        bpb = 1.2 + 6.8 / math.sqrt(s) + 0.05 * math.sin(s / 37.0)
        yield (s, time.time(), s * 0.01, bpb * LN2, bpb, 3e-3, 1.0 + 0.1 * math.cos(s),
               400_000.0, s * 4096)


def write_run(run: RunDir, steps: int) -> None:
    run.root.mkdir(parents=True)
    RunStatus(state="running", total_steps=steps * 2, kind="simulate", pid=0,
              host="bench-host-elsewhere").write(run.status_path)  # never "crashed" by pid check
    with TrainingDB(run.db_path) as db, db.batch():
        db.conn.executemany("INSERT INTO train_metrics VALUES (?,?,?,?,?,?,?,?,?)",
                            _rows(1, steps + 1))
        db.conn.executemany("INSERT INTO head_losses VALUES (?,?,?)",
                            ((s, h, 1.0 + i * 0.1) for s in range(1, steps + 1)
                             for i, h in enumerate(HEADS)))
        db.conn.executemany("INSERT INTO val_metrics VALUES (?,?,?,?,?)",
                            ((s, time.time(), 1.0, 1.3 + 5.0 / math.sqrt(s), 1 << 20)
                             for s in range(200, steps + 1, 200)))
        db.conn.execute("INSERT INTO run_events (ts, step, kind, message) VALUES (?,?,?,?)",
                        (time.time(), 0, "start", "bench"))
    run.checkpoints_dir.mkdir()
    for s in range(10_000, steps + 1, 10_000):
        run.checkpoint_path(s).write_bytes(b"\0" * 1024)
    run.log_path.write_text("".join(f"step {s:>6} | loss 1.0\n" for s in range(steps - 500, steps)))


def append(run: RunDir, start: int, n: int) -> None:
    with TrainingDB(run.db_path) as db, db.batch():
        db.conn.executemany("INSERT INTO train_metrics VALUES (?,?,?,?,?,?,?,?,?)",
                            _rows(start, start + n))
    with open(run.log_path, "a") as fh:
        fh.write("".join(f"step {s:>6} | loss 1.0\n" for s in range(start, start + n)))


class Page:
    """Calls the training refresh callback the way the browser does, carrying its state; the
    request names the callback's inputs and states as the app declares them."""

    def __init__(self, app):
        self.client = app.server.test_client()
        self.key = next(k for k in app.callback_map if "training-kpi-cards.children" in k)
        spec = app.callback_map[self.key]
        self.inputs, self.states = spec["inputs"], spec["state"]
        self.outputs = [{"id": o.split(".")[0], "property": o.split(".")[1]}
                        for o in self.key.strip(".").split("...")]
        self.state = None
        self.checkpoint = None
        self.n = 0

    def _values(self, deps: list[dict], values: dict) -> list[dict]:
        return [{**d, "value": values.get((d["id"], d["property"]))} for d in deps]

    def refresh(self) -> tuple[float, int]:
        from gui import ids
        from gui.pages.training import ids as training_ids
        self.n += 1
        tick = (ids.tab_tick(ids.TAB_TRAINING), "data")
        values = {tick: self.n, (ids.RUN_SELECT, "value"): "big",
                  (training_ids.TRAINING_SMOOTHING, "value"): 0.6,
                  (training_ids.TRAINING_LOGY, "value"): False,
                  (training_ids.TRAINING_SMOOTH_METHOD, "value"): "ema",
                  (training_ids.TRAINING_CLIP, "value"): False,
                  (ids.TABS, "active_tab"): ids.TAB_TRAINING,
                  (training_ids.TRAINING_CHART_STATE, "data"): self.state,
                  (ids.RESUME_CHECKPOINT, "value"): self.checkpoint}
        payload = {"output": self.key, "outputs": self.outputs,
                   "inputs": self._values(self.inputs, values),
                   "state": self._values(self.states, values),
                   "changedPropIds": [".".join(tick)]}
        t0 = time.perf_counter()
        r = self.client.post("/_dash-update-component", json=payload)
        elapsed = time.perf_counter() - t0
        if r.status_code != 200:
            raise RuntimeError(f"callback failed: HTTP {r.status_code} {r.data[:300]!r}")
        body = json.loads(r.data)
        state = body["response"].get("training-chart-state", {}).get("data")
        if state is not None:
            self.state = state
        self.checkpoint = body["response"].get("resume-checkpoint", {}).get("value", self.checkpoint)
        return elapsed, len(r.data)


def median_ms(values) -> float:
    return 1000 * statistics.median(values)


def main() -> None:
    from gui.app import create_app
    with tempfile.TemporaryDirectory() as tmp:
        runs = Path(tmp)
        run = RunDir(runs / "big")
        t0 = time.perf_counter()
        write_run(run, STEPS)
        print(f"wrote a {STEPS:,}-step run in {time.perf_counter() - t0:.1f} s "
              f"({run.db_path.stat().st_size / 1e6:.0f} MB metrics.db)")

        conn = connect(run.db_path, readonly=True)
        read_sql = []
        for _ in range(3):
            t0 = time.perf_counter()
            df = pd.read_sql("SELECT * FROM train_metrics", conn)
            read_sql.append(time.perf_counter() - t0)
        conn.close()
        assert len(df) == STEPS

        app = create_app(runs)
        first, first_bytes = [], 0
        for _ in range(3):
            page = Page(app)
            dt, first_bytes = page.refresh()
            first.append(dt)
        ticks, tick_bytes, idle = [], 0, []
        step = STEPS + 1
        for _ in range(10):
            append(run, step, TICK_ROWS)
            step += TICK_ROWS
            dt, tick_bytes = page.refresh()
            ticks.append(dt)
            idle.append(page.refresh()[0])

    rows = [
        ("pandas read_sql, whole table (baseline)", median_ms(read_sql), "", ""),
        ("first load: callback + JSON, rows read", 1000 * first[0], "< 500 ms",
         "ingest 1.1 s; snapshot < 250 ms"),
        ("another page's first load (rows cached)", median_ms(first[1:]), "< 500 ms", ""),
        (f"incremental tick (+{TICK_ROWS} rows, dash.Patch)", median_ms(ticks), "< 50 ms", ""),
        ("idle tick (no new rows)", median_ms(idle), "", ""),
    ]
    print(f"\n{'training refresh at ' + format(STEPS, ',') + ' steps':46s} {'median ms':>10s} "
          f"{'target':>10s}   Forge Studio reference")
    for what, ms, target, ref in rows:
        print(f"{what:46s} {ms:10.1f} {target:>10s}   {ref}")
    print(f"\nresponse size: first load {first_bytes / 1e3:.0f} KB, tick {tick_bytes / 1e3:.1f} KB; "
          f"first load / read_sql: {first[0] / (median_ms(read_sql) / 1000):.2f}x; "
          f"Forge ingest / our first load: {1.1 / first[0]:.1f}x")


if __name__ == "__main__":
    main()
