#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# How steady is the machine's measurement that sizes the `auto` recipe? RUNS separate processes of
# build/bench/ts_bench_calibration back to back (each one measurement, as a `train` command makes at
# its start), then for each estimate (the median step, which the recipe uses, and the mean step) the
# median, the smallest and largest, and the spread (largest over smallest). vmstat runs alongside:
# CPU steal is printed too. Not part of CI.
#   bench/calibration.sh [RUNS] [THREADS]      (defaults 10 and 2)
# Environment: BIN (the bench binary), CLI (the CLI, asked which OpenBLAS kernels it sets), ARGS (more
# options, e.g. "--precision fp32").
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-10}
threads=${2:-2}
bin=${BIN:-build/bench/ts_bench_calibration}
# shellcheck disable=SC2034 # bench_same_blas_as_ours (bench/lib.sh) asks it
cli=${CLI:-build/app/cli/transformer-studio-cli}
out=bench/results/calibration
mkdir -p "$out"
log=$out/runs-$(date -u +%Y%m%dT%H%M%S).txt
# shellcheck source=bench/lib.sh
source bench/lib.sh
bench_same_blas_as_ours
echo "# $(date -u +%FT%TZ) commit $(git rev-parse --short=12 HEAD 2> /dev/null || echo unknown), $(bench_cpu "$threads")" | tee "$log"
vmstat 5 > "$out/vmstat.log" &
vm=$!
for _ in $(seq "$runs"); do
  # shellcheck disable=SC2086
  "$bin" --threads "$threads" ${ARGS:-} | tee -a "$log"
done
kill "$vm" 2> /dev/null || true
awk '/^median_tokens_per_s/ { md[++n] = $2; mn[n] = $4 }
     function report(name, v,   i, j, t, lo, hi) {
       for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
       lo = v[1]; hi = v[n]
       printf "%s step: median %.0f target tokens/s, %.0f to %.0f, spread %.1f%%\n", name,
              (n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2), lo, hi, 100 * (hi / lo - 1) }
     END { printf "%d measurements\n", n; report("median", md); report("mean", mn) }' "$log" | tee -a "$log"
echo "CPU steal: $(bench_steal "$out/vmstat.log") %" | tee -a "$log"
