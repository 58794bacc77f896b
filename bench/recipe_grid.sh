#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Does the default recipe hold on each language pair? For every pair, the default (`auto`) and a grid of
# alternatives, each one change away from it (model size, dropout, learning rate, vocabulary), trained for the
# same budget back to back and scored on the run's **dev** split (beam search, the model's own settings) by the
# independent scorer ../shared/bench/bleu.py. The best recipe per pair is chosen on dev; then, and only then,
# the default and that best are each scored once on the **test** split. Not part of CI.
#
#   bench/recipe_grid.sh [BUDGET] [RUNS]
#     BUDGET   minutes per run (default 5)
#     RUNS     corpus:direction pairs (default "deu:de-en cmn:en-zh fra:fr-en ara:ar-en")
#   THREADS=2; TAG=name keeps results apart; GRID="name|--set k=v ...;name|..." replaces the alternatives;
#   COMMON="--precision fp32" is given to every run, the default's included (a machine without bf16, say);
#   TEST_ONLY=1 skips training and scores the recorded dev winners on test (after an interrupted run).
# Results: bench/results/recipe-grid[-TAG]/<recipe>-<corpus>-<direction>-<B>min/ (train.log, dev/test
# hypotheses and references, vmstat.log), dev.tsv (every run on dev), test.tsv (default and dev-best on test),
# summary.md (the table: default on test, best on dev and its test score, the ratio, the 90% target).
set -euo pipefail
cd "$(dirname "$0")/.."
budget=${1:-5}
runs=${2:-deu:de-en cmn:en-zh fra:fr-en ara:ar-en}
threads=${THREADS:-2}
shared=$(cd .. && pwd)/shared
cli=${CLI:-build/app/cli/transformer-studio-cli}
root=bench/results/recipe-grid${TAG:+-$TAG}
mkdir -p "$root"
default_grid='larger|--set model.encoder_layers=3 --set model.decoder_layers=3 --set model.d_model=256 --set model.d_ff=1024'
default_grid+=';dropout-0.3|--set model.dropout=0.3'
default_grid+=';lr-x2|--set train.lr=0.003'
default_grid+=';vocab-8k|--set data.src_tokenizer.vocab_size=8000 --set data.tgt_tokenizer.vocab_size=8000'
IFS=';' read -r -a grid <<< "default|;${GRID:-$default_grid}"
commit=$(git rev-parse --short=12 HEAD 2> /dev/null || echo unknown)
# shellcheck source=bench/lib.sh
source bench/lib.sh
bench_same_blas_as_ours
cpu=$(bench_cpu "$threads")
dev_tsv=$root/dev.tsv
test_tsv=$root/test.tsv
shown_settings() {  # a run's options as dev.tsv lists them
  local all="${COMMON:-}${COMMON:+${1:+ }}$1"
  echo "${all:-(none)}"
}
evaluate() {  # run-dir split -> scores line; writes <split>-hyp.txt / <split>-ref.txt beside the run
  local out=$1 split=$2 direction=$3
  "$cli" eval --checkpoint "$out/run/best.ckpt" --split "$split" --threads "$threads" --hyp-out "$out/$split-hyp.txt" \
    --ref-out "$out/$split-ref.txt" > "$out/eval-$split.txt" 2>&1
  bench_score "$out/$split-hyp.txt" "$out/$split-ref.txt" "$direction"
}

if [ -z "${TEST_ONLY:-}" ]; then
  [ -f "$dev_tsv" ] || printf 'recipe\tcorpus\tdirection\tminutes\tdev_bleu\tdev_chrf\tsteps\tparameters\tdate\tcpu\tsteal\twall_s\tcommit\tsplit\tsettings\n' > "$dev_tsv"
  for run in $runs; do
    name=${run%%:*}
    direction=${run#*:}
    for entry in "${grid[@]}"; do
      recipe=${entry%%|*}
      settings=${entry#*|}
      out=$root/$recipe-$name-$direction-${budget}min
      # shellcheck disable=SC2086
      bench_train "$out" "$name" "$direction" "$budget" "$threads" ${COMMON:-} $settings || echo "$recipe $name $direction: train failed"
      wall=$bench_wall
      split=$(bench_split_of "$out/run")
      steps=$(sed -n 's/.* after \([0-9]*\) steps.*/\1/p' "$out/train.log" | tail -1)
      params=$(sed -n 's/^model: \([0-9.]* M\) parameters.*/\1/p' "$out/train.log" | head -1)
      scores=$(evaluate "$out" dev "$direction")
      printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$recipe" "$name" "$direction" "$budget" \
        "$(bench_bleu_of "$scores")" "$(bench_chrf_of "$scores")" "$steps" "$params" "$(date -u +%F)" "$cpu" "$(bench_steal "$out/vmstat.log")" \
        "$wall" "$commit" "$split" "$(shown_settings "$settings")" >> "$dev_tsv"
      echo "$recipe $name $direction ${budget}min: dev $scores ($steps steps, whole command $wall s)"
    done
  done
fi

# Test: once per reported figure, the default and the recipe dev chose, after every dev score is in.
printf 'corpus\tdirection\tminutes\tdefault_test_bleu\tbest_recipe\tbest_dev_bleu\tdefault_dev_bleu\tbest_test_bleu\tratio\n' > "$test_tsv"
for run in $runs; do
  name=${run%%:*}
  direction=${run#*:}
  # The latest dev score of each recipe; a tie keeps the default.
  best=$(awk -F'\t' -v c="$name" -v d="$direction" -v b="$budget" 'NR > 1 && $2 == c && $3 == d && $4 == b && $5 != "" {
           last[$1] = $5 } END { best = "default"; for (r in last) if (last[r] + 0 > last[best] + 0) best = r; print best }' "$dev_tsv")
  default_dev=$(awk -F'\t' -v c="$name" -v d="$direction" -v b="$budget" '$1 == "default" && $2 == c && $3 == d && $4 == b { v = $5 } END { print v }' "$dev_tsv")
  best_dev=$(awk -F'\t' -v r="$best" -v c="$name" -v d="$direction" -v b="$budget" '$1 == r && $2 == c && $3 == d && $4 == b { v = $5 } END { print v }' "$dev_tsv")
  default_out=$root/default-$name-$direction-${budget}min
  default_test=$(bench_bleu_of "$(evaluate "$default_out" test "$direction")")
  if [ "$best" = default ]; then
    best_test=$default_test
  else
    best_test=$(bench_bleu_of "$(evaluate "$root/$best-$name-$direction-${budget}min" test "$direction")")
  fi
  ratio=$(awk -v a="$default_test" -v b="$best_test" 'BEGIN { if (b > 0) printf "%.3f", a / b; else print "n/a" }')
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$direction" "$budget" "$default_test" "$best" "$best_dev" \
    "$default_dev" "$best_test" "$ratio" >> "$test_tsv"
  echo "$name $direction: default test $default_test; dev chose $best (dev $best_dev vs default $default_dev), test $best_test; ratio $ratio"
done

{
  echo "# Recipe grid, ${budget} min per run ($(date -u +%F), commit $commit, $cpu)"
  echo
  echo "Chosen on dev (beam search, the model's own settings, bleu.py); each test figure computed once."
  echo
  echo "| pair | default test BLEU | dev chose | its dev BLEU (default's) | its test BLEU | default / best | ≥ 0.90 |"
  echo "|---|---:|---|---:|---:|---:|:-:|"
  awk -F'\t' 'NR > 1 { ok = ($9 != "n/a" && $9 + 0 >= 0.9) ? "yes" : "no";
    printf "| %s %s | %s | %s | %s (%s) | %s | %s | %s |\n", $1, $2, $4, $5, $6, $7, $8, $9, ok }' "$test_tsv"
  echo
  echo "Every run on dev:"
  echo
  echo "| recipe | pair | dev BLEU | dev chrF | steps | parameters | steal | whole command (s) | settings |"
  echo "|---|---|---:|---:|---:|---:|---|---:|---|"
  awk -F'\t' 'NR > 1 { printf "| %s | %s %s | %s | %s | %s | %s | %s | %s | `%s` |\n", $1, $2, $3, $5, $6, $7, $8, $11, $12, $15 }' "$dev_tsv"
} > "$root/summary.md"
echo "summary: $root/summary.md"
