#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# End-to-end test of `export --format onnx` (ts/onnx/onnx_export.h) and its consumer examples/onnx/translate.js:
# tiny models of three architectures are trained, exported, and run in ONNX Runtime (onnxruntime-node), which
# must compute LibTorch's encoder outputs, log-probabilities and caches within 1e-4, tokenise and detokenise
# like the app, and translate token for token as `translate --weights fp32` does, greedy and with beam search.
# Skipped (exit 77, saying why) without Node.js or onnxruntime-node in EXAMPLE_DIR/node_modules (scripts/
# install-deps.sh installs both), and in a build without ONNX, after checking that it refuses clearly.
# Usage: onnx_test.sh PATH_TO_CLI PATH_TO_TS_ONNX_REFERENCE EXAMPLE_DIR
set -euo pipefail
cli=${1:?usage: onnx_test.sh PATH_TO_CLI PATH_TO_TS_ONNX_REFERENCE EXAMPLE_DIR}
reference=${2:?usage: onnx_test.sh PATH_TO_CLI PATH_TO_TS_ONNX_REFERENCE EXAMPLE_DIR}
example=${3:?usage: onnx_test.sh PATH_TO_CLI PATH_TO_TS_ONNX_REFERENCE EXAMPLE_DIR}
here=$(cd "$(dirname "$0")" && pwd)
source "$here/test_lib.sh"  # $work (a mktemp -d removed by a trap on exit), check, contains
skip() {
  echo "SKIP: $*"
  test "$failures" -eq 0 || exit 1
  exit 77
}

punctuated_deu_corpus > "$work/deu.txt"  # test_lib.sh
# Sentences that exercise the tokenizers: seen and unseen words, punctuation the word detokenizer re-attaches
# (quotes, apostrophes, numbers, abbreviations, hyphens, currency), case that lowercases in more than one way,
# other scripts, characters no SentencePiece piece covers, spaces, a tab, control characters, an empty line,
# and a line longer than the learned positions of the char model.
cat > "$work/sentences.txt" << 'EOF'
Ich sehe Hund.
Du hast Buch.
Nimm nicht Auto, Tom!
Wo ist Katze?
Ich sehe Tisch?
Unbekanntes Wort.

"Wo ist Baum?", fragt Tom.
Ich   sehe	Ball (nicht Auto)!
Don't take the car, it's Tom's; l'homme qu'il voit.
Am 5. März 1977, um 10:30, kostet es 3,5 € oder $5 (ca. 4.000 z.B. km/h).
Die Vor- und Nachteile der E-Mail „Hallo“ und »Tschüss« – ‚ja‘.
ΣΟΦΟΣ ΟΔΟΣ İstanbul STRASSE Straße ǅ ÉCOLE
我喜欢茶。你好，世界！ こんにちは
Ωmega ✓★ 😀 emoji​zero‍width
Wo ist der Hund, der Katze, der Ball, der Tisch, das Buch, das Auto, der Baum und das Haus von Tom?
EOF
printf 'Hund\x01 und\x7f Katze\r\n' >> "$work/sentences.txt"

train_tiny() {  # train NAME OPTIONS...: a tiny model in a few seconds
  local name=$1; shift
  "$cli" train --corpus "$work/deu.txt" --direction de-en --preset tiny --max-steps 150 --threads 1 --no-history \
    --out "$work/$name-run" "$@" > "$work/$name-train.log" 2>&1 && return 0
  echo "FAIL: $name: train"
  tail -n 5 "$work/$name-train.log"
  exit 1
}

# Export: the folder, with the two graphs beside. A build without ONNX refuses clearly and writes nothing.
train_tiny word
"$cli" export --checkpoint "$work/word-run" --out "$work/word-model" --format onnx > "$work/word-export.log" 2>&1 && rc=0 || rc=$?
if contains "$work/word-export.log" "has no ONNX support"; then
  check "without ONNX: export --format onnx exits non-zero" test "$rc" -ne 0
  check "without ONNX: the refusal names the package" contains "$work/word-export.log" "libonnx-dev"
  check "without ONNX: nothing is written" test ! -e "$work/word-model"
  skip "this build has no ONNX library (libonnx-dev): the graphs are not built"
fi

runtime=true
if ! command -v node > /dev/null; then
  runtime=false why="Node.js is not installed (scripts/install-deps.sh installs nodejs and npm)"
elif ! (cd "$example" && node -e "require('onnxruntime-node')") > /dev/null 2>&1; then
  runtime=false why="onnxruntime-node is not installed in $example/node_modules (scripts/install-deps.sh runs"
  why+=" npm install --ignore-scripts there)"
fi

# round_trip NAME BEAM: the exported folder's graphs against LibTorch, and the consumer against `translate`.
round_trip() {
  local name=$1 beam=$2 folder=$work/$1-model
  "$cli" export --checkpoint "$work/$name-run" --out "$folder" --format onnx > "$work/$name-export.log" 2>&1 && rc=0 || rc=$?
  check "$name: export --format onnx exits 0" test "$rc" -eq 0
  for f in model.safetensors config.json README.md encoder.onnx decoder_step.onnx; do check "$name: $f written" test -s "$folder/$f"; done
  check "$name: export names the graphs" contains "$work/$name-export.log" "$folder/decoder_step.onnx"
  check "$name: the README describes the graphs" contains "$folder/README.md" '`log_probs` float \[batch, '
  $runtime || return 0

  # The numbers: ONNX Runtime against LibTorch, on the sentences as one padded batch.
  "$reference" "$folder" "$work/sentences.txt" "$work/$name-reference.json" 8 2> "$work/$name-reference.err" && rc=0 || rc=$?
  check "$name: ts_onnx_reference exits 0" test "$rc" -eq 0
  node "$here/../onnx/compare_outputs.js" "$example" "$folder" "$work/$name-reference.json" 1e-4 \
    > "$work/$name-compare.log" 2>&1 && rc=0 || rc=$?
  check "$name: ONNX Runtime computes what LibTorch computes, and tokenises as the app" test "$rc" -eq 0
  grep -E '^(FAIL|text|largest)' "$work/$name-compare.log" | sed "s/^/  $name: /" || true

  # The translations: greedy, beam search, and the model's own decoding settings (no option).
  local options label tag same
  for options in "--beam 1" "--beam $beam" ""; do
    label=${options:-"with the model's decoding settings"} tag=${options// /}
    "$cli" translate --checkpoint "$folder" --weights fp32 --threads 1 $options < "$work/sentences.txt" \
      > "$work/$name-cli$tag.txt" 2> "$work/$name-cli.err" || true
    node "$example/translate.js" "$folder" --threads 1 $options < "$work/sentences.txt" \
      > "$work/$name-onnx$tag.txt" 2> "$work/$name-onnx$tag.err" && rc=0 || rc=$?
    check "$name: translate.js $label exits 0" test "$rc" -eq 0
    check "$name: one translation per sentence" test "$(wc -l < "$work/$name-onnx$tag.txt")" -eq "$(wc -l < "$work/sentences.txt")"
    same=$(paste -d '\t' "$work/$name-cli$tag.txt" "$work/$name-onnx$tag.txt" | awk -F '\t' '$1 == $2' | wc -l)
    echo "  $name $label: $same of $(wc -l < "$work/sentences.txt") translations the same as translate's"
    check "$name: ONNX Runtime translates as translate does ($label)" cmp -s "$work/$name-cli$tag.txt" "$work/$name-onnx$tag.txt"
    cmp -s "$work/$name-cli$tag.txt" "$work/$name-onnx$tag.txt" || diff "$work/$name-cli$tag.txt" "$work/$name-onnx$tag.txt" || true
  done
}

# Word tokenizers, separate vocabularies; post-LN, sinusoidal positions, one layer each.
round_trip word 4
# Characters, one shared vocabulary and embedding, tied output; pre-LN, learned positions (the long sentence is
# cut to them), beam search with raw log-probabilities.
train_tiny char --set data.src_tokenizer.kind=char --set data.tgt_tokenizer.kind=char --set data.shared_vocab=true \
  --set model.share_embeddings=true --set model.tie_output=true --set model.pre_norm=true \
  --set model.positions=learned --set model.max_positions=64 --set data.max_len=60 --set decode.length_penalty=0
round_trip char 3
# SentencePiece: unigram source, BPE target, separate vocabularies; two layers of four heads, unscaled embeddings,
# a length limit of its own, and beam search of 3 as the model's decoding setting.
train_tiny spm --set data.src_tokenizer.kind=unigram --set data.src_tokenizer.vocab_size=60 \
  --set data.tgt_tokenizer.kind=bpe --set data.tgt_tokenizer.vocab_size=50 --set model.encoder_layers=2 \
  --set model.decoder_layers=2 --set model.heads=4 --set model.scale_embeddings=false \
  --set decode.max_len_a=1 --set decode.max_len_b=4 --set decode.mode=beam --set decode.beam=3
round_trip spm 5

# Only a translation model has ONNX graphs; a language model is refused by name, and nothing is written.
for i in $(seq 1 30); do printf 'Line %d: the quick brown fox jumps over the lazy dog.\n' "$i"; done > "$work/lm.txt"
"$cli" lm-train --text "$work/lm.txt" --preset shakespeare-char --max-steps 2 --threads 1 --no-history \
  --set eval_interval=2 --set eval_iters=1 --set n_layer=1 --out "$work/lm-run" > "$work/lm-train.log" 2>&1
"$cli" export --checkpoint "$work/lm-run" --out "$work/lm-model" --format onnx > "$work/lm-export.log" 2>&1 && rc=0 || rc=$?
check "a language model: export --format onnx exits non-zero" test "$rc" -ne 0
check "  and says ONNX export is for translation models" contains "$work/lm-export.log" \
  "holds a language model: ONNX export is for translation models"
check "  and writes nothing" test ! -e "$work/lm-model"
# A folder export into an earlier ONNX export removes the graphs, which would not fit new weights.
"$cli" export --checkpoint "$work/word-run" --out "$work/word-model" > /dev/null 2>&1 && rc=0 || rc=$?
check "export without --format onnx into an ONNX export exits 0" test "$rc" -eq 0
check "  and removes its graphs" test ! -e "$work/word-model/encoder.onnx" -a ! -e "$work/word-model/decoder_step.onnx"

echo "$passes passed, $failures failed"
test "$failures" -eq 0 || exit 1
$runtime || skip "$why: the graphs were exported and checked, not run"
