#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Translating a file: sentences per second for the whole `translate` command (loading the model
# included), one sentence at a time (--batch 1) against batches (the default, 64), greedy and beam
# search, on a run's 1,000 dev pairs (held out from training, and not the test pairs reported
# elsewhere). BLEU of each output by ../shared/bench/bleu.py shows that batching changes nothing.
# Not part of CI.
#
#   bench/translate_speed.sh RUN_DIR [RUN_DIR...]      (each with best.ckpt and split.json)
#   THREADS=2  REPEAT=3 (the fastest of REPEAT runs is kept)  BEAMS="1 4"
# Results: bench/results/translate-speed/summary.md
set -euo pipefail
cd "$(dirname "$0")/.."
shared=$(cd .. && pwd)/shared
cli=${CLI:-build/app/cli/transformer-studio-cli}
threads=${THREADS:-2}
repeat=${REPEAT:-3}
root=bench/results/translate-speed
mkdir -p "$root"
# shellcheck source=bench/lib.sh
source bench/lib.sh
cpu=$(bench_cpu "$threads")
commit=$(git rev-parse --short=12 HEAD 2> /dev/null || echo unknown)
summary=$root/summary.md
{
  echo "# Translating a file: $(date -u +%F), commit $commit, $cpu"
  echo
  echo "| model | decoding | sentences | one at a time: s | sentences/s | batches of 64: s | sentences/s | speed-up | BLEU one at a time | BLEU batched | same lines |"
  echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|:-:|"
} > "$summary"

for run in "$@"; do
  name=$(basename "$(dirname "$run")")-$(basename "$run")
  out=$root/$name
  mkdir -p "$out"
  # The dev pairs as the run dealt them (split.json), sources and references.
  /usr/bin/python3 - "$run/split.json" "$out/dev.src" "$out/dev.ref" << 'EOF'
import json, sys
pairs = json.load(open(sys.argv[1]))["dev"]
with open(sys.argv[2], "w") as s, open(sys.argv[3], "w") as r:
    for src, tgt in pairs:
        s.write(src.replace("\n", " ") + "\n")
        r.write(tgt.replace("\n", " ") + "\n")
EOF
  n=$(wc -l < "$out/dev.src")
  direction=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["direction"])' "$run/split.json" 2> /dev/null || echo xx-en)
  for beam in ${BEAMS:-1 4}; do
    declare -A best=()
    for batch in 1 64; do
      best[$batch]=999999
      for _ in $(seq "$repeat"); do
        start=$(date +%s.%N)
        "$cli" translate --checkpoint "$run/best.ckpt" --threads "$threads" --beam "$beam" --batch "$batch" \
          --input "$out/dev.src" > "$out/beam$beam-batch$batch.hyp"
        s=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
        best[$batch]=$(awk -v a="${best[$batch]}" -v b="$s" 'BEGIN { print (b < a ? b : a) }')
      done
    done
    bleu1=$(bench_bleu_of "$(bench_score "$out/beam$beam-batch1.hyp" "$out/dev.ref" "$direction")")
    bleu64=$(bench_bleu_of "$(bench_score "$out/beam$beam-batch64.hyp" "$out/dev.ref" "$direction")")
    same=$(cmp -s "$out/beam$beam-batch1.hyp" "$out/beam$beam-batch64.hyp" && echo yes || echo "no ($(diff "$out/beam$beam-batch1.hyp" "$out/beam$beam-batch64.hyp" | grep -c '^<') lines differ)")
    decoding=$([ "$beam" = 1 ] && echo greedy || echo "beam $beam")
    awk -v m="$name" -v d="$decoding" -v n="$n" -v a="${best[1]}" -v b="${best[64]}" -v x="$bleu1" -v y="$bleu64" -v s="$same" \
      'BEGIN { printf "| %s | %s | %d | %.2f | %.0f | %.2f | %.0f | %.1f× | %s | %s | %s |\n", m, d, n, a, n / a, b, n / b, a / b, x, y, s }' >> "$summary"
    unset best
  done
done
cat "$summary"
