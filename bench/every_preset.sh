#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Every preset on both seed corpora, without extra flags (issue 21, item 6): trains each preset on
# ../shared/data/deu.txt (de-en) and ../shared/data/cmn.txt (en-zh) for a few minutes of wall clock,
# then translates the first held-out pairs. Not part of CI (it needs ../shared/data and time).
#
#   bench/every_preset.sh [MINUTES] [THREADS]     (default 3 minutes, 2 threads)
# Results: bench/results/every-preset/<preset>-<corpus>/ (train log, translations) and summary.txt,
# one line per run: preset, corpus, exit status, steps, and the log lines that say what was adjusted.
set -uo pipefail
cd "$(dirname "$0")/.."
minutes=${1:-3}
threads=${2:-2}
shared=$(cd .. && pwd)/shared
cli=${CLI:-build/app/cli/transformer-studio-cli}
out=bench/results/every-preset
mkdir -p "$out"
summary=$out/summary.txt
echo "# $(date -u +%FT%TZ), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $minutes min, $threads threads" > "$summary"
for preset in $("$cli" presets | awk 'NF {print $1}'); do
  for pair in "deu.txt de-en" "cmn.txt en-zh"; do
    set -- $pair
    corpus=$shared/data/$1 direction=$2
    [ -f "$corpus" ] || { echo "$corpus not present" >&2; exit 2; }
    run=$out/$preset-${1%.txt}
    rm -rf "$run"
    "$cli" train --corpus "$corpus" --direction "$direction" --preset "$preset" --threads "$threads" \
      --max-minutes "$minutes" --no-history --out "$run" > "$run.log" 2>&1
    rc=$?
    steps=$(grep -o "after [0-9]* steps" "$run.log" | tail -1)
    notes=$(grep -E "tokenizer: |[1-9][0-9]* longer than .* dropped|left out" "$run.log" | tr '\n' ' ')
    echo "$preset $1 rc=$rc ${steps:-no steps} $notes" | tee -a "$summary"
    if [ -f "$run/best.ckpt" ]; then
      "$cli" eval --checkpoint "$run/best.ckpt" --threads "$threads" --hyp-out "$run.hyp" --ref-out "$run.ref" \
        > "$run.eval" 2>&1
      grep -E "BLEU|chrF|left out|error" "$run.eval" | head -3 | sed "s/^/  /" | tee -a "$summary"
      paste -d '\n' <(head -3 "$run.ref" | sed 's/^/  ref: /') <(head -3 "$run.hyp" | sed 's/^/  out: /') | tee -a "$summary"
    fi
  done
done
