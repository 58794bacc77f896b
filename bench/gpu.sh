#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# What the GPU machine checks and measures (issue 32), in one call within its 10-minute command limit.
# On the GPU machine, after the kit has built the project headless (../shared/gpu/README.md):
#   bash .device-kit/build.sh && source /tmp/deps/env.sh && COMMIT=<hash> DEADLINE=<epoch s> bash bench/gpu.sh
# The sections run most valuable first, and each is cut to the time left before DEADLINE, so a call
# that runs short still brings back what it finished. Writes into $OUT (the folder the device tool
# brings back, at most 8 files) or bench/results/gpu:
#   machine.txt     date, commit, GPU, driver, PyTorch/CUDA, CPU and flags, the CLI's --version
#   tests-gpu.txt   the GPU's tests (Cuda.*, PrecisionCuda.*, Precision.*, Environment.*) through CTest
#   throughput.txt  the annotated preset against the peer on the GPU (bench/throughput.sh, DEVICE=cuda),
#                   then ours in bf16 three ways: as it trains, TS_SDPA_CUDNN=1, TS_ATTENTION=explicit
#   translate.txt   an `auto` model trained for BUDGET minutes (default 1) on deu.txt German->English,
#                   its 1,000 test pairs translated on the GPU greedy and with beam 4, timed whole and
#                   the decoding alone, in the default batches (512) and in batches of 64 and 2048
#   tests.txt       the rest of the headless suite (one process per test: a crash names its test)
#   logs.tar.gz     every log behind these (the trainings', the peer's, the hypotheses)
# Environment: DEADLINE (seconds since the epoch; default 7 minutes from now), COMMIT (the commit the
# copied tree holds, where it is no checkout), BUILD (default /root/build), BUDGET, STEPS (throughput
# steps, default 300), DEVICE (default cuda; DEVICE=cpu BUILD=build BUDGET=0.3 STEPS=5 tries the script
# out on a CPU machine), WORK (the logs' folder, default /tmp/ts-gpu).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
build=${BUILD:-/root/build}
out=${OUT:-bench/results/gpu}
work=${WORK:-/tmp/ts-gpu}
cli=$build/app/cli/transformer-studio-cli
device=${DEVICE:-cuda}
shared=$(cd .. && pwd)/shared
deadline=${DEADLINE:-$(($(date +%s) + 420))}
mkdir -p "$out" "$work"
section() { echo "== $* ($(date -u +%T), $(left) s left)"; }
left() { echo $((deadline - $(date +%s))); }
# within SECONDS CMD...: CMD cut at SECONDS or at the deadline (less 20 s to pack the logs), whichever
# comes first; a section with under 10 s left is skipped and says so.
within() {
  local cap=$1 t
  shift
  t=$(($(left) - 20))
  [ "$t" -gt "$cap" ] && t=$cap
  if [ "$t" -lt 10 ]; then
    echo "skipped: the deadline is near"
    return 124
  fi
  timeout "$t" "$@"
}

{
  date -u +'%F %T UTC'
  echo "commit ${COMMIT:-$(git log -1 --format=%H 2> /dev/null || echo 'unknown: not a checkout')}"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1 || echo "no nvidia-smi"
  python3 -c 'import torch; print("PyTorch", torch.__version__, "CUDA", torch.version.cuda)' 2>&1
  g++ --version 2>&1 | head -1
  lscpu | grep -E '^Model name|^CPU\(s\)|^Flags'
  "$cli" --version 2>&1 | head -8
} > "$out/machine.txt"
grep -v '^Flags' "$out/machine.txt"

gpu_tests='^(Cuda|PrecisionCuda|Precision|Environment)\.'
section "the GPU's tests"
(cd "$build" && within 150 ctest -R "$gpu_tests" -j 4 --timeout 120 --output-on-failure) > "$out/tests-gpu.txt" 2>&1
grep -E 'tests passed|\*\*\*|Failed|Cuda|Skipped' "$out/tests-gpu.txt" | tail -n 30

section throughput
DEVICE=$device SKIP_NPROC=1 OUT_DIR="$work/throughput" CLI="$cli" PYTHON=${PYTHON:-python3} \
  within 150 bash bench/throughput.sh "${STEPS:-300}" "$(nproc)" > "$out/throughput.txt" 2>&1
# bf16 three ways (appended to throughput.txt): as it trains (LibTorch's fused attention without cuDNN's
# kernels), with cuDNN's kernels allowed, and with the explicit attention products (ts/model/attention.h).
{
  echo "bf16, the same preset, corpus and steps, three ways:"
  for way in "" "TS_SDPA_CUDNN=1" "TS_ATTENTION=explicit"; do
    log=$work/throughput/bf16-${way:-default}.log
    # shellcheck disable=SC2086  # an empty $way is no argument
    within 90 env $way "$cli" train --corpus "$shared/data/cmn.txt" --direction en-zh --preset annotated \
      --max-steps "${STEPS:-300}" --device "$device" --precision bf16 --set train.validate_every=0 --set data.dev=500 \
      --set data.test=1000 --no-history --out "$work/bf16-run" > "$log" 2>&1
    rm -rf "$work/bf16-run"
    printf '  %-22s %s\n' "${way:-as it trains}" "$(grep -o '[0-9]* tok/s on average' "$log" | tail -1)"
  done
} >> "$out/throughput.txt" 2>&1
cat "$out/throughput.txt"

section translate
run=$work/translate-run
rm -rf "$run"
{
  within 150 "$cli" train --corpus "$shared/data/deu.txt" --direction de-en --budget "${BUDGET:-1}" --device "$device" \
    --no-history --out "$run" > "$work/translate-train.log" 2>&1
  grep -E 'recipe|model:|tok/s on average|BLEU' "$work/translate-train.log" | tail -n 6
  # The device's default batch (512 sentences on a GPU), then the CPU's 64 and a larger one, to choose by.
  for way in "--beam 1" "--beam 4" "--beam 1 --batch 64" "--beam 4 --batch 64" "--beam 1 --batch 2048"; do
    name=$(echo "$way" | tr -d ' -')
    start=$(date +%s.%N)
    # shellcheck disable=SC2086  # $way is several options
    within 60 "$cli" eval --checkpoint "$run/best.ckpt" --device "$device" $way \
      --hyp-out "$work/test-$name.hyp" > "$work/eval-$name.txt" 2>&1
    end=$(date +%s.%N)
    lines=$(wc -l < "$work/test-$name.hyp")
    awk -v w="$way" -v n="$lines" -v s="$start" -v e="$end" \
      'BEGIN { printf "%s: %d sentences in %.2f s, whole command: %.0f sentences/s\n", w, n, e - s, n / (e - s) }'
    grep -E 'BLEU|^translated' "$work/eval-$name.txt" | head -3
  done
  rm -rf "$run"
} > "$out/translate.txt" 2>&1
cat "$out/translate.txt"

section "the rest of the headless suite"
(cd "$build" && within 400 ctest -E "$gpu_tests|^package_deb$" -j 12 --timeout 120 --output-on-failure) \
  > "$out/tests.txt" 2>&1
grep -E 'tests passed|\*\*\*|Failed' "$out/tests.txt" | tail -n 30

tar -czf "$out/logs.tar.gz" -C "$work" . 2> /dev/null
section "done"
