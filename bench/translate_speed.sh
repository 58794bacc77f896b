#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Translating a file: sentences per second for the whole `transformer-studio-cli translate` command
# (loading the model included), one sentence at a time (--batch 1) against batches (BATCH sentences;
# by default the programs' own: 32 hypotheses a step on a CPU, so 32 sentences greedily and 8 with beam 4),
# greedy and beam search, on a run's 1,000 dev pairs (held out from training, and not the test pairs
# reported elsewhere); then the same batches with the run's lexical shortlist (`translate
# --shortlist`, made by `shortlist` when the run has none). The time to start and translate one
# sentence (the process and the model loading) is measured too, and the "after start-up" rates
# subtract it. BLEU of each output by ../shared/bench/bleu.py shows that batching changes nothing,
# and what the shortlist changes. transformer-studio-cli translates from the translator file beside
# the checkpoint without loading LibTorch (ts/infer/file_translation.h); the same batches by
# transformer-studio-cli-libtorch (LibTorch loaded, the packed kernels) and by
# transformer-studio-translate are timed beside it and their lines compared. Not part of CI.
#
#   bench/translate_speed.sh RUN_DIR [RUN_DIR...]      (each with best.ckpt and split.json)
#   BATCH=64 (sentences a batch; default: the programs' own)
#   THREADS=2  REPEAT=3 (the fastest of REPEAT runs is kept)  BEAMS="1 4"  SHORTLIST=0 (leave it out)
#   WEIGHTS=int8 (or fp32; default: the programs' own, bf16) for every program
# Results: bench/results/translate-speed/summary.md
set -euo pipefail
cd "$(dirname "$0")/.."
shared=$(cd .. && pwd)/shared
cli=${CLI:-build/app/cli/transformer-studio-cli}
lite=${LITE:-build/app/translate/transformer-studio-translate}
libtorch_cli=${LIBTORCH_CLI:-build/app/cli/transformer-studio-cli-libtorch}
threads=${THREADS:-2}
repeat=${REPEAT:-3}
shortlist=${SHORTLIST:-1}
root=bench/results/translate-speed
mkdir -p "$root"
# shellcheck source=bench/lib.sh
source bench/lib.sh
bench_same_blas_as_ours
cpu=$(bench_cpu "$threads")
commit=$(git rev-parse --short=12 HEAD 2> /dev/null || echo unknown)
summary=$root/summary.md
batch=()
default_batch="the programs' default size"
[ -n "${BATCH:-}" ] && batch=(--batch "$BATCH")
{
  echo "# Translating a file: $(date -u +%F), commit $commit, $cpu, ${WEIGHTS:-bf16} weights, batches of ${BATCH:-$default_batch}"
  echo
  echo "| model | decoding | sentences | start-up + 1 sentence: s | one at a time: s | batched: s | sentences/s | after start-up | speed-up | shortlist: s | sentences/s | after start-up | BLEU one at a time | BLEU batched | same lines | BLEU shortlist | lines the shortlist changed | transformer-studio-translate: start-up + 1 sentence: s | batched: s | sentences/s | same lines as translate | with the shortlist: s | sentences/s | same lines as translate --shortlist | transformer-studio-cli-libtorch: batched: s | sentences/s | same lines as translate |"
  echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|:-:|---:|---:|---:|---:|---:|:-:|---:|---:|:-:|---:|---:|:-:|"
} > "$summary"

# fastest OUT ARGS...: runs `transformer-studio-cli translate ARGS` $repeat times, its output into
# OUT; prints the fastest seconds. LITE_RUN=1 fastest ...: transformer-studio-translate ARGS instead;
# LIBTORCH_RUN=1: transformer-studio-cli-libtorch translate ARGS.
fastest() {
  local out=$1 best=999999 start s
  shift
  local program=("$cli" translate)
  [ "${LITE_RUN:-0}" = 1 ] && program=("$lite")
  [ "${LIBTORCH_RUN:-0}" = 1 ] && program=("$libtorch_cli" translate)
  for _ in $(seq "$repeat"); do
    start=$(date +%s.%N)
    "${program[@]}" "$@" > "$out"
    s=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
    best=$(awk -v a="$best" -v b="$s" 'BEGIN { print (b < a ? b : a) }')
  done
  echo "$best"
}

for run in "$@"; do
  name=$(basename "$(dirname "$run")")-$(basename "$run")
  out=$root/$name
  mkdir -p "$out"
  bench_dev_pairs "$run" "$out/dev.src" "$out/dev.ref"
  n=$(wc -l < "$out/dev.src")
  head -1 "$out/dev.src" > "$out/one.src"
  direction=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["direction"])' "$run/split.json" 2> /dev/null || echo xx-en)
  if [ "$shortlist" = 1 ] && [ ! -s "$run/shortlist.safetensors" ]; then
    "$cli" shortlist --checkpoint "$run/best.ckpt" | tee "$out/shortlist.log"
  fi
  for beam in ${BEAMS:-1 4}; do
    common=(--checkpoint "$run/best.ckpt" --threads "$threads" --beam "$beam" ${WEIGHTS:+--weights "$WEIGHTS"})
    load=$(fastest "$out/one.hyp" "${common[@]}" --input "$out/one.src")
    alone=$(fastest "$out/beam$beam-batch1.hyp" "${common[@]}" --batch 1 --input "$out/dev.src")
    batched=$(fastest "$out/beam$beam-batched.hyp" "${common[@]}" "${batch[@]}" --input "$out/dev.src")
    bleu1=$(bench_bleu_of "$(bench_score "$out/beam$beam-batch1.hyp" "$out/dev.ref" "$direction")")
    bleu_batched=$(bench_bleu_of "$(bench_score "$out/beam$beam-batched.hyp" "$out/dev.ref" "$direction")")
    same=$(cmp -s "$out/beam$beam-batch1.hyp" "$out/beam$beam-batched.hyp" && echo yes \
      || echo "no ($(diff "$out/beam$beam-batch1.hyp" "$out/beam$beam-batched.hyp" | grep -c '^<') lines differ)")
    listed=- listed_bleu=- listed_changed=-
    if [ "$shortlist" = 1 ]; then
      listed=$(fastest "$out/beam$beam-shortlist.hyp" "${common[@]}" "${batch[@]}" --shortlist --input "$out/dev.src")
      listed_bleu=$(bench_bleu_of "$(bench_score "$out/beam$beam-shortlist.hyp" "$out/dev.ref" "$direction")")
      listed_changed=$(diff "$out/beam$beam-batched.hyp" "$out/beam$beam-shortlist.hyp" | grep -c '^<' || true)
    fi
    # translate wrote the translator file above: transformer-studio-translate reads it.
    lite_load=$(LITE_RUN=1 fastest "$out/one-lite.hyp" "${common[@]}" --input "$out/one.src")
    lite_batched=$(LITE_RUN=1 fastest "$out/beam$beam-lite.hyp" "${common[@]}" "${batch[@]}" --input "$out/dev.src")
    lite_same=$(cmp -s "$out/beam$beam-batched.hyp" "$out/beam$beam-lite.hyp" && echo yes \
      || echo "no ($(diff "$out/beam$beam-batched.hyp" "$out/beam$beam-lite.hyp" | grep -c '^<') lines differ)")
    lite_listed=- lite_listed_same=-
    if [ "$shortlist" = 1 ]; then
      lite_listed=$(LITE_RUN=1 fastest "$out/beam$beam-lite-shortlist.hyp" "${common[@]}" "${batch[@]}" --shortlist --input "$out/dev.src")
      lite_listed_same=$(cmp -s "$out/beam$beam-shortlist.hyp" "$out/beam$beam-lite-shortlist.hyp" && echo yes \
        || echo "no ($(diff "$out/beam$beam-shortlist.hyp" "$out/beam$beam-lite-shortlist.hyp" | grep -c '^<') lines differ)")
    fi
    torch_batched=$(LIBTORCH_RUN=1 fastest "$out/beam$beam-libtorch.hyp" "${common[@]}" "${batch[@]}" --input "$out/dev.src")
    torch_same=$(cmp -s "$out/beam$beam-batched.hyp" "$out/beam$beam-libtorch.hyp" && echo yes \
      || echo "no ($(diff "$out/beam$beam-batched.hyp" "$out/beam$beam-libtorch.hyp" | grep -c '^<') lines differ)")
    decoding=$([ "$beam" = 1 ] && echo greedy || echo "beam $beam")
    awk -v m="$name" -v d="$decoding" -v n="$n" -v l="$load" -v a="$alone" -v b="$batched" -v x="$bleu1" -v y="$bleu_batched" \
      -v s="$same" -v c="$listed" -v z="$listed_bleu" -v ch="$listed_changed" -v ll="$lite_load" \
      -v lb="$lite_batched" -v ls="$lite_same" -v lc="$lite_listed" -v lcs="$lite_listed_same" \
      -v tb="$torch_batched" -v ts="$torch_same" '
      function rate(t) { return t == "-" ? "-" : sprintf("%.0f", n / t) }
      function after(t) { return t == "-" ? "-" : sprintf("%.0f", n / (t - l)) }
      BEGIN {
        printf "| %s | %s | %d | %.2f | %.2f | %.2f | %s | %s | %.1f× | %s | %s | %s | %s | %s | %s | %s | %s | %.2f | %.2f | %s | %s | %s | %s | %s | %.2f | %s | %s |\n",
          m, d, n, l, a, b, rate(b), after(b), a / b, c, rate(c), after(c), x, y, s, z, ch, ll, lb, rate(lb), ls, lc, rate(lc), lcs, tb, rate(tb), ts
      }' >> "$summary"
  done
done
cat "$summary"
