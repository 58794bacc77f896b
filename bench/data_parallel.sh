#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Data-parallel scaling: trains the annotated preset on ../shared/data/cmn.txt (en-zh) for a fixed
# number of steps as 1 process x 1 thread, then as 2 processes x 1 thread (`--nproc 2`, Gloo on
# loopback), and prints training tokens/s (validation excluded) and the scaling efficiency
# tokens/s(2 processes) / (2 x tokens/s(1 process)). Both runs see the same batches: each of the
# 2 processes trains on half of every batch. Needs 2 free cores for a meaningful figure.
#   bench/data_parallel.sh [STEPS] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
steps=${1:-200}
rounds=${2:-1}
cli=${CLI:-build/app/cli/transformer-studio-cli}
corpus=${CORPUS:-../shared/data/cmn.txt}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
rate() { grep -o "[0-9]* tok/s on average" "$1" | grep -o "^[0-9]*"; }
common=(train --corpus "$corpus" --direction en-zh --preset annotated --max-steps "$steps" --threads 1
        --set train.max_minutes=0 --set train.validate_every=1000000 --no-history)
one=() two=()
for r in $(seq 1 "$rounds"); do
  "$cli" "${common[@]}" --out "$work/one$r" > "$work/one$r.log" 2>&1 || { cat "$work/one$r.log"; exit 1; }
  one+=("$(rate "$work/one$r.log")")
  "$cli" "${common[@]}" --nproc 2 --out "$work/two$r" > "$work/two$r.log" 2>&1 || { cat "$work/two$r.log"; exit 1; }
  two+=("$(rate "$work/two$r.log")")
done
echo "annotated preset, $corpus en-zh, $steps steps, rounds $rounds, $(nproc) cores, $(date -u +%F)"
echo "tok/s, 1 process x 1 thread:   ${one[*]}"
echo "tok/s, 2 processes x 1 thread: ${two[*]}"
python3 - "${one[*]}" "${two[*]}" <<'PY'
import sys, statistics
one = statistics.median(float(x) for x in sys.argv[1].split())
two = statistics.median(float(x) for x in sys.argv[2].split())
print(f"median 1x1 {one:.0f} tok/s, 2x1 {two:.0f} tok/s: speed-up {two / one:.2f}x, "
      f"scaling efficiency {100 * two / (2 * one):.0f}%")
PY
