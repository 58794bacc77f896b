#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Cost of recording every step in the run history: trains the demo preset for a fixed number of steps
# with and without the history, alternating, and compares average training tokens/s.
#   bench/store_overhead.sh [STEPS] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
steps=${1:-300}
rounds=${2:-3}
cli=${CLI:-build/app/cli/transformer-studio-cli}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
rate() { grep -o "[0-9]* tok/s on average" "$1" | grep -o "^[0-9]*"; }
with=() without=()
for r in $(seq 1 "$rounds"); do
  "$cli" demo --max-steps "$steps" --set train.max_minutes=0 --set train.validate_every=100000 --no-history \
    --out "$work/off$r" > "$work/off$r.log" 2>&1
  without+=("$(rate "$work/off$r.log")")
  "$cli" demo --max-steps "$steps" --set train.max_minutes=0 --set train.validate_every=100000 --db "$work/runs.db" \
    --out "$work/on$r" > "$work/on$r.log" 2>&1
  with+=("$(rate "$work/on$r.log")")
done
echo "steps $steps, rounds $rounds, $(date -u +%F)"
echo "tok/s without history: ${without[*]}"
echo "tok/s with history (every step): ${with[*]}"
python3 - "${without[*]}" "${with[*]}" <<'PY'
import sys, statistics
off = [float(x) for x in sys.argv[1].split()]; on = [float(x) for x in sys.argv[2].split()]
m_off, m_on = statistics.median(off), statistics.median(on)
print(f"median without {m_off:.0f}, with {m_on:.0f}: overhead {100 * (m_off - m_on) / m_off:+.2f}%")
PY
