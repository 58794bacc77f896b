#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# End-to-end test of lm-train and lm-generate: the real binary on a small generated text.
# Usage: lm_test.sh PATH_TO_CLI
set -uo pipefail
cli=${1:?usage: lm_test.sh PATH_TO_CLI}
source "$(dirname "$0")/test_lib.sh"

# A few kilobytes of verse-like text.
for i in $(seq 1 60); do
  printf 'Line %d: the quick brown fox jumps over the lazy dog.\nAnd so, my friend, we part.\n' "$i" >> "$work/input.txt"
done

"$cli" lm-train --text "$work/input.txt" --preset shakespeare-char --max-steps 20 --threads 1 \
  --set eval_interval=10 --set eval_iters=2 --set n_layer=2 --out "$work/run" > "$work/train.log" 2>&1
check "lm-train exits 0" test $? -eq 0
check "data summary printed" contains "$work/train.log" "vocabulary"
check "eval line with train, val and baseline" contains "$work/train.log" "step 20: train loss .*, val loss .* (bigram baseline"
check "last checkpoint written" test -s "$work/run/last.ckpt"
check "best checkpoint written" test -s "$work/run/best.ckpt"
check "config saved" test -s "$work/run/config.json"

# Resume continues the step count.
"$cli" lm-train --resume "$work/run" --max-steps 30 --threads 1 > "$work/resume.log" 2>&1
check "resume exits 0" test $? -eq 0
check "resume starts at step 20" contains "$work/resume.log" "resuming at step 20"
check "resume reaches step 30" contains "$work/resume.log" "after 30 steps"

# The run history: one language-model run (resume continued it), with its loss estimates.
"$cli" runs list > "$work/runs.txt" 2>&1
check "history lists one LM run" test "$(grep -c "input.txt .* LM " "$work/runs.txt")" -eq 1
"$cli" runs export 1 --json > "$work/export.json" 2>&1
check "export says language-model" grep -q '"kind": "language-model"' "$work/export.json"
check "export has val and train loss estimates" grep -q '"train_loss_estimate"' "$work/export.json"
check "export has no BLEU for an LM" test "$(grep -c '"bleu"' "$work/export.json")" -eq 0
"$cli" lm-train --text "$work/input.txt" --max-steps 2 --threads 1 --no-history --out "$work/unrecorded" > /dev/null 2>&1
"$cli" runs list > "$work/runs2.txt" 2>&1
check "--no-history records nothing" test "$(grep -c "input.txt" "$work/runs2.txt")" -eq 1

# The same seed gives the same text; another seed another.
gen() { "$cli" lm-generate --checkpoint "$work/run/last.ckpt" --prompt "Line" --length 80 --temperature 0.9 --top-k 10 --threads 1 "$@"; }
gen --seed 7 > "$work/a.txt" 2> "$work/a.err"
check "lm-generate exits 0" test $? -eq 0
gen --seed 7 > "$work/b.txt" 2>&1
gen --seed 8 > "$work/c.txt" 2>&1
check "output starts with the prompt" contains "$work/a.txt" "^Line"
check "same seed, same text" cmp -s "$work/a.txt" "$work/b.txt"
check "other seed, other text" bash -c "! cmp -s '$work/a.txt' '$work/c.txt'"
check "output has the prompt and 80 characters" test "$(head -c -1 "$work/a.txt" | wc -m)" -eq 84

# A prompt character the model never saw is refused by name, before anything is printed.
"$cli" lm-generate --checkpoint "$work/run/last.ckpt" --prompt "Line~" --length 5 > "$work/prompt.out" 2> "$work/prompt.log"
check "unknown prompt character refused" test $? -ne 0
check "unknown prompt character named" contains "$work/prompt.log" 'prompt: "~" is not in the model'"'"'s vocabulary'
check "nothing printed for a refused prompt" test ! -s "$work/prompt.out"

# Bad input: non-zero exit, the file named.
printf 'abc\0def' > "$work/binary.bin"
"$cli" lm-train --text "$work/binary.bin" --max-steps 1 --out "$work/bad" > "$work/bad.log" 2>&1
check "binary file refused" test $? -ne 0
check "binary file named" contains "$work/bad.log" "binary.bin: looks like a binary file"
: > "$work/empty.txt"
"$cli" lm-train --text "$work/empty.txt" --max-steps 1 --out "$work/bad" > "$work/empty.log" 2>&1
check "empty file refused" test $? -ne 0
check "empty file named" contains "$work/empty.log" "empty.txt: the file is empty"
printf 'ok\ncaf\xe9\n' > "$work/latin1.txt"
"$cli" lm-train --text "$work/latin1.txt" --max-steps 1 --out "$work/bad" > "$work/utf8.log" 2>&1
check "invalid UTF-8 refused with its line" contains "$work/utf8.log" "latin1.txt: invalid UTF-8 on line 2"
"$cli" lm-generate --checkpoint "$work/nothing.ckpt" --prompt x > "$work/missing.log" 2>&1
check "missing checkpoint refused" test $? -ne 0
check "missing checkpoint named" contains "$work/missing.log" "nothing.ckpt"

echo "$passes passed, $failures failed"
if [ "$failures" -ne 0 ]; then
  for f in "$work"/*.log; do echo "== $f"; tail -n 20 "$f"; done
  exit 1
fi
