#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The desktop app's start-up: `transformer-studio --help` (the front, which sets the OpenMP policy and
# OpenBLAS's kernels and starts transformer-studio-app once) against `transformer-studio-app --help`
# started directly (which sets them and starts itself again: Qt and LibTorch loaded twice), offscreen,
# alternating, RUNS times each; --help returns once the libraries are loaded and the application
# object is made, before any window. The environment is cleared of the variables either would set.
# Prints each time, then the median and the range of each. Not part of CI.
#   bench/app_start.sh [RUNS]      (default 10)
# Environment: BUILD (default build)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-10}
build=${BUILD:-build}
front=$build/app/gui/transformer-studio
app=$build/app/gui/transformer-studio-app
cli=$build/app/cli/transformer-studio-cli
# shellcheck source=bench/lib.sh
source bench/lib.sh
home=$(mktemp -d)
trap 'rm -rf "$home"' EXIT
mkdir -m 700 "$home/runtime"
echo "# $(date -u +%FT%TZ) commit $(git rev-parse --short=12 HEAD 2> /dev/null || echo unknown), $(bench_cpu 2)"
echo "# OpenBLAS: $("$cli" --version 2> /dev/null | sed -n 's/^BLAS: //p')"
seconds_of() {
  local start
  start=$(date +%s.%N)
  env -u OPENBLAS_CORETYPE -u TS_OPENBLAS_FALLBACK -u GOMP_SPINCOUNT -u OMP_WAIT_POLICY -u TS_OPENMP_POLICY_SET \
    QT_QPA_PLATFORM=offscreen XDG_RUNTIME_DIR="$home/runtime" XDG_CONFIG_HOME="$home/config" \
    XDG_DATA_HOME="$home/data" "$1" --help > /dev/null 2>&1
  awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.3f", e - s }'
}
: > "$home/front.txt"
: > "$home/app.txt"
for i in $(seq "$runs"); do
  f=$(seconds_of "$front")
  a=$(seconds_of "$app")
  echo "$f" >> "$home/front.txt"
  echo "$a" >> "$home/app.txt"
  echo "round $i: transformer-studio (front) $f s, transformer-studio-app directly $a s"
done
summary() {
  sort -n "$2" | awk -v name="$1" '{ v[NR] = $1 }
    END { m = (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2)
          printf "%s: median %.2f s, %.2f to %.2f s over %d starts\n", name, m, v[1], v[NR], NR }'
}
summary "transformer-studio (front)" "$home/front.txt"
summary "transformer-studio-app directly" "$home/app.txt"
