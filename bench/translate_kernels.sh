#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Translating a file on each of the packed layers' kernels (ts/infer/packed_linear.h, `Isa`) this CPU
# runs, interleaved: `transformer-studio-cli translate` of a run's 1,000 dev pairs in batches of 64,
# whole command, TS_DECODING_ISA naming the kernel; the kernels take turns ROUNDS times and each
# one's fastest is kept. Also, once per kernel, the same sentences one at a time (--batch 1): the lines
# must be the same (batched = one at a time on every kernel), and BLEU by ../shared/bench/bleu.py.
# Not part of CI.
#
#   bench/translate_kernels.sh RUN_DIR        (with best.ckpt and split.json)
#   KERNELS="avx512 amx-bf16" (isa_name's names; default: those two)  BEAMS="1 4"  ROUNDS=5  THREADS=2
# Results: bench/results/translate-kernels/summary.md
set -euo pipefail
cd "$(dirname "$0")/.."
cli=${CLI:-build/app/cli/transformer-studio-cli}
shared=$(cd .. && pwd)/shared
threads=${THREADS:-2}
rounds=${ROUNDS:-5}
kernels=${KERNELS:-avx512 amx-bf16}
run=$1
root=bench/results/translate-kernels
mkdir -p "$root"
# shellcheck source=bench/lib.sh
source bench/lib.sh
bench_same_blas_as_ours
bench_dev_pairs "$run" "$root/dev.src" "$root/dev.ref"
n=$(wc -l < "$root/dev.src")
direction=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["direction"])' "$run/split.json")
summary=$root/summary.md
vmstat 5 > "$root/vmstat.log" &
vmstat_pid=$!
trap 'kill $vmstat_pid 2> /dev/null || true' EXIT
{
  echo "# Translating a file on each kernel: $(date -u +%F), commit $(git rev-parse --short=12 HEAD), $(bench_cpu "$threads")"
  echo
  echo "Run: $run; $n dev pairs; batches of 64, the fastest of $rounds interleaved rounds, whole command (seconds)."
  echo
  echo "| decoding | kernel | s | sentences/s | BLEU | same lines one at a time |"
  echo "|---|---|---:|---:|---:|:-:|"
} > "$summary"
for beam in ${BEAMS:-1 4}; do
  declare -A best=()
  common=(--checkpoint "$run/best.ckpt" --threads "$threads" --beam "$beam" --input "$root/dev.src")
  for _ in $(seq "$rounds"); do
    for kernel in $kernels; do
      start=$(date +%s.%N)
      TS_DECODING_ISA=$kernel "$cli" translate "${common[@]}" --batch 64 > "$root/beam$beam-$kernel.hyp"
      s=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f", b - a }')
      best[$kernel]=$(awk -v a="${best[$kernel]:-999999}" -v b="$s" 'BEGIN { print (b < a ? b : a) }')
    done
  done
  for kernel in $kernels; do
    TS_DECODING_ISA=$kernel "$cli" translate "${common[@]}" --batch 1 > "$root/beam$beam-$kernel-one.hyp"
    same=$(cmp -s "$root/beam$beam-$kernel.hyp" "$root/beam$beam-$kernel-one.hyp" && echo yes \
      || echo "no ($(diff "$root/beam$beam-$kernel.hyp" "$root/beam$beam-$kernel-one.hyp" | grep -c '^<') lines differ)")
    bleu=$(bench_bleu_of "$(bench_score "$root/beam$beam-$kernel.hyp" "$root/dev.ref" "$direction")")
    decoding=$([ "$beam" = 1 ] && echo greedy || echo "beam $beam")
    awk -v d="$decoding" -v k="$kernel" -v t="${best[$kernel]}" -v n="$n" -v b="$bleu" -v s="$same" \
      'BEGIN { printf "| %s | %s | %.3f | %.0f | %s | %s |\n", d, k, t, n / t, b, s }' >> "$summary"
  done
  unset best
done
echo >> "$summary"
echo "CPU steal (vmstat, %): $(bench_steal "$root/vmstat.log")" >> "$summary"
cat "$summary"
