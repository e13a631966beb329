#!/usr/bin/env bash
# Evaluate a checkpoint as a compressor (spec: scripts/eval_enwik8.sh).
#   scripts/eval_enwik8.sh [--data FILE] [--checkpoint CKPT] [--run RUN] [--max-bytes N] [--profile P]
# Uses enwik8 when present (--data, $ENWIK8 or data/enwik8), else the run's validation split,
# and says which. Writes eval_results rows into the run's metrics.db. See bin/evaluate.py.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-.venv/bin/python}"
[ -x "$PY" ] || PY=python3
exec "$PY" -m bin.evaluate "$@"
