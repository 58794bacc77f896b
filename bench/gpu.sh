#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# What the GPU machine checks and measures (issue 32), in one call within its 10-minute command limit.
# On the GPU machine, after the kit has built the project headless (../shared/gpu/README.md):
#   bash .device-kit/build.sh && source /tmp/deps/env.sh && bash bench/gpu.sh
# Writes into $OUT (the folder the device tool brings back) or bench/results/gpu:
#   machine.txt     date, commit, GPU, driver, PyTorch/CUDA, CPU and flags, the CLI's --version
#   tests.log       the headless suite through CTest (one process per test: a crash names its test),
#                   the CUDA tests (Cuda.*, PrecisionCuda.*, Environment.*) among them
#   throughput.txt  the annotated preset against the peer on the GPU (bench/throughput.sh, DEVICE=cuda)
#   translate.txt   an `auto` model trained for BUDGET minutes (default 2) on deu.txt German->English,
#                   its 1,000 test pairs translated on the GPU greedy and with beam 4, timed whole
# Environment: TESTS (a CTest -R pattern; default all), BUILD (default /root/build), BUDGET, STEPS
# (throughput steps, default 300), DEVICE
# (default cuda; DEVICE=cpu BUILD=build BUDGET=0.5 STEPS=5 tries the script out on a CPU machine).
set -uo pipefail
cd "$(dirname "$0")/.."
build=${BUILD:-/root/build}
out=${OUT:-bench/results/gpu}
cli=$build/app/cli/transformer-studio-cli
device=${DEVICE:-cuda}
shared=$(cd .. && pwd)/shared
mkdir -p "$out"
section() { echo "== $* ($(date -u +%T))"; }

{
  date -u +'%F %T UTC'
  git log -1 --format='commit %H' 2> /dev/null || echo "commit: not a checkout"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1 || echo "no nvidia-smi"
  python3 -c 'import torch; print("PyTorch", torch.__version__, "CUDA", torch.version.cuda)' 2>&1
  lscpu | grep -E '^Model name|^CPU\(s\)|^Flags'
  "$cli" --version 2>&1 | head -5
} > "$out/machine.txt"
cat "$out/machine.txt" | grep -v '^Flags'

section tests
(cd "$build" && timeout 300 ctest ${TESTS:+-R "$TESTS"} -j "$(nproc)" --timeout 150 --output-on-failure -E '^package_deb$') > "$out/tests.log" 2>&1
grep -E 'tests passed|\*\*\*|Failed|Cuda|Environment' "$out/tests.log" | tail -n 30

section throughput
DEVICE=$device SKIP_NPROC=1 OUT_DIR="$out/throughput" CLI="$cli" PYTHON=${PYTHON:-python3} \
  timeout 240 bash bench/throughput.sh "${STEPS:-300}" "$(nproc)" > "$out/throughput.txt" 2>&1
cat "$out/throughput.txt"

section translate
run=$out/translate-run
rm -rf "$run"
{
  "$cli" train --corpus "$shared/data/deu.txt" --direction de-en --budget "${BUDGET:-2}" --device "$device" --no-history \
    --out "$run" > "$out/translate-train.log" 2>&1
  grep -E 'recipe|model:|tok/s on average|BLEU' "$out/translate-train.log" | tail -n 6
  for beam in 1 4; do
    start=$(date +%s.%N)
    "$cli" eval --checkpoint "$run/best.ckpt" --device "$device" --beam "$beam" --hyp-out "$out/test-beam$beam.hyp" \
      > "$out/eval-beam$beam.txt" 2>&1
    end=$(date +%s.%N)
    lines=$(wc -l < "$out/test-beam$beam.hyp")
    awk -v b="$beam" -v n="$lines" -v s="$start" -v e="$end" \
      'BEGIN { printf "beam %s: %d sentences in %.2f s, whole command: %.0f sentences/s\n", b, n, e - s, n / (e - s) }'
    grep -E 'BLEU' "$out/eval-beam$beam.txt" | head -2
  done
  rm -rf "$run"
} > "$out/translate.txt" 2>&1
cat "$out/translate.txt"
