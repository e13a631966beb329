#!/usr/bin/env bash
# The checks that need a GPU machine, in one run (docs/engine.md and docs/training.md record the
# results):
#   1. the committed golden .umc files (written on another machine) decode with the engine's
#      products on CUDA and with numpy; files written with CUDA products equal numpy's and are
#      saved to $OUT/umc_from_gpu.tar, for `python scripts/gpu_check.py verify TAR` elsewhere;
#   2. CUDA training speed of tier2_small and tier3_base, each for TRAIN_S seconds, eager
#      (COMPILE="false true" adds torch.compile runs; compiling tier2_small took over 115 s on
#      an H200, so they need a TRAIN_S of several minutes to show a steady speed).
# Usage, from the repository root on the GPU machine (on an H200: the codec part ~4 min, the
# golden files there decoding ~2.3x slower with CUDA products; then 2 x (TRAIN_S + 30 s)):
#   OUT=/tmp/gpu TRAIN_S=60 bash scripts/gpu_check.sh
# Needs python3 with torch (CUDA) and numpy; wheels in .whl/ (zstandard, brotli, ...) are
# installed to /tmp/site first when present.
set -u
OUT=${OUT:-/tmp/gpu_check}
TRAIN_S=${TRAIN_S:-60}
COMPILE=${COMPILE:-false}
PY=${PYTHON:-python3}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
if [ -d .whl ]; then
    "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site
fi
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
{
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
    "$PY" -c 'import torch, numpy, platform; print("torch", torch.__version__, "cuda", torch.version.cuda, "numpy", numpy.__version__, "python", platform.python_version(), "cpu", platform.processor() or platform.machine(), "cores", __import__("os").cpu_count())'
    grep -m1 "model name" /proc/cpuinfo
} > "$OUT/machine.txt" 2>&1
cat "$OUT/machine.txt"
"$PY" setup.py -q build_ext --inplace > "$OUT/build.log" 2>&1 \
    || echo "compiled loops not built (see build.log): numpy references, same bits, slower"

echo "== codec: CPU <-> CUDA"
timeout 300 "$PY" scripts/gpu_check.py codec "$OUT" 2>&1 | tee "$OUT/codec.log"

echo "== training speed on CUDA (${TRAIN_S} s each)"
timeout 120 "$PY" -m bin.prepare_data --out /tmp/gpu_data --max-bytes 10000000 > "$OUT/train.log" 2>&1
runs=()
for tier in tier2_small tier3_base; do
    for compile in $COMPILE; do
        run=/tmp/gpu_runs/${tier}_compile_${compile}
        runs+=("$run")
        echo "-- $tier compile=$compile" >> "$OUT/train.log"
        room=40; [ "$compile" = true ] && room=240    # compilation is inside the budget
        timeout $((TRAIN_S + room)) "$PY" -m bin.train --config "configs/$tier.yaml" --out "$run" \
            --time-budget "$TRAIN_S" --quiet --set data.path=/tmp/gpu_data \
            --set hardware.compile=$compile --set logging.log_every=10 \
            --set logging.eval_every=1000000 --set logging.save_every=1000000 \
            >> "$OUT/train.log" 2>&1
        echo "exit $?" >> "$OUT/train.log"
    done
done
"$PY" scripts/gpu_check.py speed "${runs[@]}" 2>&1 | tee -a "$OUT/train.log"
