"""A run's report: one self-contained HTML file (charts, config, evaluation and compression
results) that opens in any browser with no server and no network.

The charts are the Training tab's (bits per byte, learning rate and gradient norm, system) and the
Evaluation tab's history, drawn by gui/figures from the run's metrics.db; the cockpit's own
plotly.js (gui/assets/05_plotly.min.js, 1.6 MB) is inlined once, so the file works offline.
Tables are plain HTML, every value escaped.
"""
from __future__ import annotations

import html
import sqlite3
import time
from collections.abc import Iterable
from pathlib import Path

import pandas as pd
import plotly.io as pio

from umoec.metrics import read
from umoec.run import RunDir
from umoec.units import bpb as bits_per_byte

from .figures.compression import eval_bpb_history_fig
from .figures.series import MAX_POINTS
from .figures.training import loss_fig, lr_grad_fig, system_fig
from .services.runs import summarise

PLOTLY_JS = Path(__file__).parent / "assets" / "05_plotly.min.js"   # the trace types gui/ draws
READ_ERRORS = (FileNotFoundError, sqlite3.DatabaseError, OSError)   # run_report raises these
STYLE = """body{font-family:system-ui,sans-serif;margin:2rem auto;max-width:1100px;color:#212529}
h1{font-size:1.6rem}h2{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #dee2e6}
table{border-collapse:collapse;font-size:.85rem}td,th{padding:3px 10px;border-bottom:1px solid #eee;
text-align:left}pre{background:#f8f9fa;padding:1rem;font-size:.75rem;overflow-x:auto}
.muted{color:#6c757d}"""


def _table(title: str, df: pd.DataFrame, columns: Iterable[str], empty: str) -> str:
    """A section: `columns` of `df` as an HTML table (pandas escapes every cell), or `empty`."""
    if df.empty:
        return f'<h2>{title}</h2><p class="muted">{html.escape(empty)}</p>'
    table = df[[c for c in columns if c in df.columns]].map(_fmt).to_html(index=False, border=0)
    return f"<h2>{title}</h2>{table}"


def _fmt(value) -> str:
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return ""
    if isinstance(value, float):
        return f"{value:,.4g}" if abs(value) < 1e5 else f"{value:,.0f}"
    return str(value)


def run_report(run: RunDir, grad_clip: float | None = None) -> str:
    """The report of `run` as an HTML string; raises READ_ERRORS when metrics.db cannot be read."""
    with read.open_db(run.db_path) as conn:
        train = read.train_series(conn)
        val = read.val_metrics(conn)
        system = read.system_metrics(conn)
        evals = read.eval_results(conn)
        baselines = read.eval_baselines(conn)
        jobs = read.compression_jobs(conn)
    summary = summarise(run)
    figures = [("Bits per byte", loss_fig(train, val, max_points=MAX_POINTS)),
               ("Learning rate and gradient norm",
                lr_grad_fig(train, max_points=MAX_POINTS, grad_clip=grad_clip)),
               ("System", system_fig(system, max_points=MAX_POINTS))]
    if not evals.empty:
        figures.append(("Evaluation", eval_bpb_history_fig(evals, baselines,
                                                           simulated=summary.simulated)))
    plots = [f"<h2>{title}</h2>" + pio.to_html(fig, full_html=False, include_plotlyjs=False,
                                                config={"displaylogo": False})
             for title, fig in figures]
    if not jobs.empty:
        jobs = jobs.assign(bpb=[bits_per_byte(p, r) if r else None
                                for p, r in zip(jobs["compressed_bytes"], jobs["raw_bytes"],
                                                strict=True)])
    try:
        config = run.config_path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        config = "(no config.yaml in the run folder)"
    facts = [f"state: {summary.label}", f"kind: {summary.kind}", f"steps logged: {len(train):,}"]
    if not train.empty:
        last = train.iloc[-1]
        facts.append(f"last train bpb: {float(last['bpb']):.4f} at step {int(last['step']):,}")
    if not val.empty:
        facts.append(f"best val bpb: {float(val['bpb'].min()):.4f}")
    return "\n".join([
        "<!doctype html><html><head><meta charset='utf-8'>",
        f"<title>{html.escape(run.name)}: u-moec-tiny run report</title>",
        f"<style>{STYLE}</style></head><body>",
        f"<h1>{html.escape(run.name)}</h1>",
        f"<p class='muted'>u-moec-tiny run report, written "
        f"{html.escape(time.strftime('%Y-%m-%d %H:%M'))} from {html.escape(str(run.root))}</p>",
        "<p>" + " · ".join(html.escape(f) for f in facts) + "</p>",
        f"<script>{PLOTLY_JS.read_text(encoding='utf-8')}</script>",
        *plots,
        _table("Evaluations", evals, ["step", "dataset", "bpb", "compressed_bytes",
                                      "original_bytes", "roundtrip_ok"],
               "No evaluation has been run on this run."),
        _table("Classical compressors on the same bytes", baselines,
               ["step", "dataset", "method", "compressed_bytes", "original_bytes", "seconds"],
               "None measured."),
        _table("Compression jobs", jobs, ["job_id", "profile", "status", "raw_bytes",
                                          "compressed_bytes", "bpb", "elapsed_s", "input_path"],
               "No compression job on this run."),
        "<h2>Config</h2>",
        f"<pre>{html.escape(config)}</pre>",
        "</body></html>"])

