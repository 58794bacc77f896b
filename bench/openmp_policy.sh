#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The OpenMP wait policy, idle and beside a busy program: trains the same steps under each policy,
# on a quiet machine and with one busy loop per other core running at normal priority (what a
# person's browser or compiler does to a desktop app), and prints tokens per second.
#
#   bench/openmp_policy.sh [STEPS] [THREADS]     (defaults 60 and all cores)
# Corpus: ../shared/data/deu.txt if present, else the built-in demo corpus.
set -euo pipefail
cd "$(dirname "$0")/.."
steps=${1:-60}
threads=${2:-$(nproc)}
cli=${CLI:-build/app/cli/transformer-studio-cli}
corpus=../shared/data/deu.txt
[ -f "$corpus" ] || corpus=
work=$(mktemp -d)
trap 'rm -rf "$work"; kill $(jobs -p) 2> /dev/null || true' EXIT

run() {  # label env... -> tokens/s on average
  local label=$1
  shift
  local args=(train --direction de-en --threads "$threads" --max-steps "$steps" --budget 0 --no-history
              --set data.dev=50 --set train.dev_max_sentences=10 --out "$work/run")
  if [ -n "$corpus" ]; then args+=(--corpus "$corpus"); else args=(demo --threads "$threads" --max-steps "$steps" --no-history --out "$work/run"); fi
  env "$@" "$cli" "${args[@]}" > "$work/log" 2>&1
  printf '%-32s %s\n' "$label" "$(grep -o '[0-9]* tok/s on average' "$work/log" | head -1)"
}

policies=("default|" "GOMP_SPINCOUNT=10000|GOMP_SPINCOUNT=10000" "GOMP_SPINCOUNT=1000|GOMP_SPINCOUNT=1000"
          "OMP_WAIT_POLICY=PASSIVE|OMP_WAIT_POLICY=PASSIVE")
echo "# $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores, $threads threads, $steps steps, $(date -u +%F)"
echo "## quiet"
for p in "${policies[@]}"; do run "${p%%|*}" ${p#*|}; done
echo "## beside $((threads - 1 > 0 ? threads - 1 : 1)) busy loop(s) at normal priority"
for _ in $(seq $((threads - 1 > 0 ? threads - 1 : 1))); do (while :; do :; done) & done
for p in "${policies[@]}"; do run "${p%%|*}" ${p#*|}; done
